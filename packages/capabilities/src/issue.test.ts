import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { A, B, ops } from './internal/testing/helpers.js';
import { createTestStore, type TestStore } from './internal/testing/test-store.js';

let s: TestStore;
let o: ReturnType<typeof ops>;
beforeEach(async () => {
  s = await createTestStore();
  o = ops(s);
});
afterEach(() => s.close());

const issue = (actor: string, spec: Parameters<TestStore['engine']['issue']>[2]) => s.run((scope) => s.engine.issue(scope, actor, spec));

describe('issue', () => {
  it('[CAP-5] issueTrusted validates rights and finite uses on ask/deny', async () => {
    await expect(o.grant({ subject: A, resource: 'object:a', rights: ['*' as never] })).rejects.toMatchObject({ code: 'rights_invalid' });
    await expect(o.grant({ subject: A, resource: 'object:a', rights: [] })).rejects.toMatchObject({ code: 'rights_invalid' });
    await expect(o.grant({ subject: A, resource: 'object:a', rights: ['delegate' as never] })).rejects.toMatchObject({
      code: 'rights_invalid',
    });
    await expect(o.grant({ subject: A, resource: 'object:a', rights: ['read'], effect: 'ask', usesRemaining: 1 })).rejects.toMatchObject({
      code: 'capability_invalid',
      message: expect.stringContaining('usesRemaining'),
    });
    await expect(o.grant({ subject: A, resource: 'object:a', rights: ['read'], effect: 'deny', usesRemaining: 2 })).rejects.toMatchObject({
      code: 'capability_invalid',
    });
    await expect(o.grant({ subject: A, resource: 'object:a', rights: ['read'], usesRemaining: 0 })).rejects.toMatchObject({
      code: 'capability_invalid',
    });
    expect(s.events).toHaveLength(0);
  });

  it('[CAP-19] expiry: unparsable refused at issue; a grant stops at now+1s', async () => {
    await expect(o.grant({ subject: A, resource: 'object:a', rights: ['read'], expiresAt: 'zzzz' })).rejects.toMatchObject({
      code: 'capability_invalid',
      message: expect.stringContaining('expiresAt'),
    });
    const at = new Date(s.clock.now().getTime() + 1000).toISOString().replace('Z', '').replace('.000', '');
    const g = await o.grant({ subject: A, resource: 'object:a', rights: ['read'], expiresAt: at });
    expect(g.expiresAt).toBe(new Date(s.clock.now().getTime() + 1000).toISOString());
    expect((await o.check(A, 'object:a', 'read')).allowed).toBe(true);
    s.clock.advance(1000);
    expect((await o.check(A, 'object:a', 'read')).effect).toBe('missing');
    expect(await o.list(A)).toHaveLength(0);
    expect(await o.list(A, true)).toHaveLength(1);
  });

  it('[CAP-21] actor strings without holdings cannot issue', async () => {
    for (const actor of ['system', 'human:owner', 'image:x']) {
      await expect(issue(actor, { subject: B, resource: 'object:a', rights: ['read'] })).rejects.toMatchObject({
        code: 'permission_denied',
      });
    }
    expect(await o.list(B)).toHaveLength(0);
  });

  it('[CAP-22] a grant holder transfers read: S allowed, parentCapId = read record, issuerCapId = grant record', async () => {
    const read = await o.grant({ subject: A, resource: 'object:a', rights: ['read'] });
    const grant = await o.grant({ subject: A, resource: 'object:a', rights: ['grant'] });
    const rec = await issue(A, { subject: B, resource: 'object:a', rights: ['read'] });
    expect(rec).toMatchObject({ parentCapId: read.id, issuerCapId: grant.id, issuer: A, depth: 1 });
    expect((await o.check(B, 'object:a', 'read')).allowed).toBe(true);
    expect(s.audit.find((e) => e.action === 'capability.issue' && (e.details as { capId: string }).capId === rec.id)).toBeDefined();
  });

  it('[CAP-23] grant+read holder cannot issue write, a deny, or from a 1-use read', async () => {
    await o.grant({ subject: A, resource: 'object:a', rights: ['grant'] });
    await o.grant({ subject: A, resource: 'object:a', rights: ['read'] });
    await expect(issue(A, { subject: B, resource: 'object:a', rights: ['write'] })).rejects.toMatchObject({ code: 'permission_denied' });
    await expect(issue(A, { subject: B, resource: 'object:a', rights: ['read'], effect: 'deny' })).rejects.toMatchObject({
      code: 'permission_denied',
    });
    await o.grant({ subject: A, resource: 'object:b', rights: ['grant'] });
    await o.grant({ subject: A, resource: 'object:b', rights: ['read'], usesRemaining: 1 });
    await expect(issue(A, { subject: B, resource: 'object:b', rights: ['read'] })).rejects.toMatchObject({ code: 'permission_denied' });
    expect(await o.list(B)).toHaveLength(0);
  });

  it('admin issues any effect, fresh (no parent)', async () => {
    const admin = await o.grant({ subject: A, resource: 'object:*', rights: ['admin'] });
    const rec = await issue(A, { subject: B, resource: 'object:a', rights: ['write'], effect: 'deny' });
    expect(rec).toMatchObject({ effect: 'deny', issuerCapId: admin.id, parentCapId: null });
    expect((await o.check(B, 'object:a', 'write')).effect).toBe('deny');
  });

  it('[CAP-24] a 1-use grant is exhausted by one issue; a failing event sink leaves no record and the use intact', async () => {
    const grant = await o.grant({ subject: A, resource: 'object:a', rights: ['grant'], usesRemaining: 1 });
    await o.grant({ subject: A, resource: 'object:a', rights: ['read'] });
    await expect(
      s.run((scope) => s.engine.issue(scope, A, { subject: B, resource: 'object:a', rights: ['read'] }), { failEvents: true }),
    ).rejects.toThrow('event sink failed');
    expect(await o.list(B)).toHaveLength(0);
    expect(await o.get(grant.id)).toMatchObject({ usesRemaining: 1, status: 'active' });
    await issue(A, { subject: B, resource: 'object:a', rights: ['read'] });
    expect(await o.get(grant.id)).toMatchObject({ usesRemaining: 0, status: 'revoked', revokeCause: 'exhausted' });
    await expect(issue(A, { subject: C_, resource: 'object:a', rights: ['read'] })).rejects.toMatchObject({ code: 'permission_denied' });
  });

  it('a failing audit sink rolls back issueTrusted', async () => {
    await expect(
      s.run((scope) => s.engine.issueTrusted(scope, { subject: A, resource: 'object:a', rights: ['read'] }, 'host'), { failAudit: true }),
    ).rejects.toThrow('audit sink failed');
    expect(await o.list(A, true)).toHaveLength(0);
    expect(s.events).toHaveLength(0);
  });

  it('grantTrusted through the sdk Authority issues on behalf of the pid', async () => {
    const id = await s.run((scope) =>
      s.engine.authority(scope, A).grantTrusted({ subject: A, resource: 'object:obj_1', rights: ['read', 'write'] }),
    );
    expect(await o.get(id)).toMatchObject({ issuer: A, subject: A, rights: ['read', 'write'] });
    expect(s.events).toEqual([{ type: 'capability.granted', data: expect.objectContaining({ capId: id }) }]);
  });
});

const C_ = 'pid_00000000000000c0';
