import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DelegationSpec } from './capability-record.js';
import { A, B, C, D, ops } from './internal/testing/helpers.js';
import { createTestStore, type TestStore } from './internal/testing/test-store.js';

let s: TestStore;
let o: ReturnType<typeof ops>;
beforeEach(async () => {
  s = await createTestStore();
  o = ops(s);
});
afterEach(() => s.close());

const delegate = (parentCapId: string, child: string, spec: DelegationSpec, actor: string) =>
  s.run((scope) => s.engine.delegate(scope, parentCapId, child, spec, actor));

describe('delegate', () => {
  it('[CAP-25] narrows resource and rights; outside the parent is refused', async () => {
    const p = await o.grant({ subject: A, resource: 'filesystem:src/*', rights: ['read', 'write'], delegable: true });
    const c = await delegate(p.id, B, { resource: 'filesystem:src/a.py', rights: ['read'] }, A);
    expect(c).toMatchObject({ parentCapId: p.id, depth: 1, subject: B });
    expect((await o.check(B, 'filesystem:src/a.py', 'read')).allowed).toBe(true);
    expect((await o.check(B, 'filesystem:src/a.py', 'write')).effect).toBe('missing');
    await expect(delegate(p.id, B, { resource: 'filesystem:other.py', rights: ['read'] }, A)).rejects.toMatchObject({
      code: 'delegation_denied',
      message: expect.stringContaining('resource'),
    });
  });

  it('only the holder (or host) delegates a record', async () => {
    const p = await o.grant({ subject: A, resource: 'object:a', rights: ['read'], delegable: true });
    await expect(delegate(p.id, C, { resource: 'object:a', rights: ['read'] }, B)).rejects.toMatchObject({ code: 'delegation_denied' });
    await expect(delegate('cap_nope', C, { resource: 'object:a', rights: ['read'] }, A)).rejects.toMatchObject({
      code: 'capability_not_found',
    });
  });

  it('[CAP-26] wider rights / later expiry / no expiry: refused, refused, inherits', async () => {
    const exp = new Date(s.clock.now().getTime() + 60_000).toISOString();
    const p = await o.grant({ subject: A, resource: 'object:a', rights: ['read'], delegable: true, expiresAt: exp });
    await expect(delegate(p.id, B, { resource: 'object:a', rights: ['read', 'write'] }, A)).rejects.toMatchObject({
      code: 'delegation_denied',
      message: expect.stringContaining('write'),
    });
    await expect(
      delegate(
        p.id,
        B,
        { resource: 'object:a', rights: ['read'], expiresAt: new Date(s.clock.now().getTime() + 120_000).toISOString() },
        A,
      ),
    ).rejects.toMatchObject({ code: 'delegation_denied', message: expect.stringContaining('expiresAt') });
    await expect(
      delegate(p.id, B, { resource: 'object:a', rights: ['read'], expiresAt: new Date(s.clock.now().getTime() - 1).toISOString() }, A),
    ).rejects.toMatchObject({ code: 'capability_invalid' });
    const c = await delegate(p.id, B, { resource: 'object:a', rights: ['read'] }, A);
    expect(c.expiresAt).toBe(exp);
  });

  it('[CAP-27] a non-delegable host allow is neither delegated nor inherited', async () => {
    const p = await o.grant({ subject: A, resource: 'object:a', rights: ['read'] });
    await expect(delegate(p.id, B, { resource: 'object:a', rights: ['read'] }, A)).rejects.toMatchObject({
      code: 'delegation_denied',
      message: expect.stringContaining('not delegable'),
    });
    await expect(
      s.run((scope) => s.engine.inheritForSpawn(scope, A, B, [{ resource: 'object:a', rights: ['read'] }])),
    ).rejects.toMatchObject({ code: 'delegation_denied' });
    expect(await o.list(B, true)).toHaveLength(0);
  });

  it('[CAP-28] depth: maxDepth 1 refuses maxDepth 10, plain inherits 1; the default chain ends at depth 4', async () => {
    const p1 = await o.grant({ subject: A, resource: 'object:a', rights: ['read'], delegable: true, maxDepth: 1 });
    await expect(delegate(p1.id, B, { resource: 'object:a', rights: ['read'], maxDepth: 10 }, A)).rejects.toMatchObject({
      code: 'delegation_denied',
      message: expect.stringContaining('maxDepth'),
    });
    const c1 = await delegate(p1.id, B, { resource: 'object:a', rights: ['read'] }, A);
    expect(c1.maxDepth).toBe(1);
    await expect(delegate(p1.id, B, { resource: 'object:a', rights: ['read'], delegable: true }, A)).rejects.toMatchObject({
      code: 'delegation_denied',
    });

    let cur = await o.grant({ subject: A, resource: 'object:b', rights: ['read'], delegable: true });
    const holders = [A, B, C, D, 'pid_00000000000000e0'];
    for (let depth = 1; depth <= 3; depth++)
      cur = await delegate(cur.id, holders[depth]!, { resource: 'object:b', rights: ['read'], delegable: true }, holders[depth - 1]!);
    expect(cur.depth).toBe(3);
    await expect(
      delegate(cur.id, holders[4]!, { resource: 'object:b', rights: ['read'], delegable: true }, holders[3]!),
    ).rejects.toMatchObject({ code: 'delegation_denied' });
    const last = await delegate(cur.id, holders[4]!, { resource: 'object:b', rights: ['read'] }, holders[3]!);
    expect(last.depth).toBe(4);
    expect((await o.check(holders[4]!, 'object:b', 'read')).allowed).toBe(true);
  });

  it('[CAP-29] constraints: dropping shell_policy_level is refused, an exact copy is fine, adding it is refused', async () => {
    const p = await o.grant({
      subject: A,
      resource: 'shell:git',
      rights: ['execute'],
      delegable: true,
      constraints: { shell_policy_level: 'read_only' },
    });
    await expect(delegate(p.id, B, { resource: 'shell:git', rights: ['execute'], constraints: {} }, A)).rejects.toMatchObject({
      code: 'delegation_denied',
      message: expect.stringContaining('shell_policy_level'),
    });
    const c = await delegate(p.id, B, { resource: 'shell:git', rights: ['execute'], constraints: { shell_policy_level: 'read_only' } }, A);
    expect(c.constraints).toEqual({ shell_policy_level: 'read_only' });
    const inherited = await delegate(p.id, C, { resource: 'shell:git', rights: ['execute'] }, A);
    expect(inherited.constraints).toEqual({ shell_policy_level: 'read_only' });
    const q = await o.grant({ subject: A, resource: 'shell:ls', rights: ['execute'], delegable: true });
    await expect(
      delegate(q.id, B, { resource: 'shell:ls', rights: ['execute'], constraints: { shell_policy_level: 'x' } }, A),
    ).rejects.toMatchObject({ code: 'delegation_denied' });
  });

  it('[CAP-30] anti-laundering: a deny or ask under the wide allow blocks delegating it; the child holds nothing', async () => {
    for (const effect of ['deny', 'ask'] as const) {
      const holder = effect === 'deny' ? A : C;
      const p = await o.grant({ subject: holder, resource: 'filesystem:*', rights: ['read'], delegable: true });
      await o.grant({ subject: holder, resource: 'filesystem:secret', rights: ['read'], effect });
      await expect(delegate(p.id, B, { resource: 'filesystem:*', rights: ['read'] }, holder)).rejects.toMatchObject({
        code: 'delegation_denied',
        message: expect.stringContaining('launder'),
      });
      // A disjoint narrower resource is fine.
      await delegate(p.id, D, { resource: 'filesystem:public', rights: ['read'] }, holder);
    }
    expect(await o.list(B, true)).toHaveLength(0);
  });

  it('anti-laundering also sees allow records carrying deny rules', async () => {
    const wide = await o.grant({ subject: A, resource: 'shell:*', rights: ['execute'], delegable: true });
    await o.grant({
      subject: A,
      resource: 'shell:git',
      rights: ['execute'],
      constraints: {
        authority_rules: [{ ruleId: 'p', operation: 'shell.exec', effect: 'deny', conditions: { argvPrefix: ['git', 'push'] } }],
      },
    });
    await expect(delegate(wide.id, B, { resource: 'shell:git', rights: ['execute'] }, A)).rejects.toMatchObject({
      code: 'delegation_denied',
    });
  });

  it('[CAP-31] a finite delegable parent cannot be delegated', async () => {
    const p = await o.grant({ subject: A, resource: 'object:a', rights: ['read'], delegable: true, usesRemaining: 3 });
    await expect(delegate(p.id, B, { resource: 'object:a', rights: ['read'] }, A)).rejects.toMatchObject({
      code: 'delegation_denied',
      message: expect.stringContaining('finite'),
    });
  });

  it('a child may be finite, ask or deny, but finite uses only on allow', async () => {
    const p = await o.grant({ subject: A, resource: 'object:*', rights: ['read'], delegable: true });
    const f = await delegate(p.id, B, { resource: 'object:a', rights: ['read'], usesRemaining: 1 }, A);
    expect(f.usesRemaining).toBe(1);
    await expect(delegate(p.id, B, { resource: 'object:b', rights: ['read'], effect: 'deny', usesRemaining: 1 }, A)).rejects.toMatchObject({
      code: 'capability_invalid',
    });
    const ask = await delegate(p.id, B, { resource: 'object:c', rights: ['read'], effect: 'ask' }, A);
    expect(ask.effect).toBe('ask');
  });

  it('[CAP-20] a delegated child stops when its parent expires', async () => {
    const p = await o.grant({
      subject: A,
      resource: 'object:a',
      rights: ['read'],
      delegable: true,
      expiresAt: new Date(s.clock.now().getTime() + 10_000).toISOString(),
    });
    await delegate(
      p.id,
      B,
      { resource: 'object:a', rights: ['read'], expiresAt: new Date(s.clock.now().getTime() + 5_000).toISOString() },
      A,
    );
    const q = await o.grant({
      subject: C,
      resource: 'object:a',
      rights: ['read'],
      delegable: true,
      expiresAt: new Date(s.clock.now().getTime() + 10_000).toISOString(),
    });
    const child = await delegate(q.id, D, { resource: 'object:a', rights: ['read'] }, C);
    // Make the parent expire before its child: write an earlier expiry straight into the store.
    await s.db
      .updateTable('cap_grants')
      .set({ expires_at: new Date(s.clock.now().getTime() + 1_000).toISOString() })
      .where('id', '=', q.id)
      .execute();
    expect((await o.check(D, 'object:a', 'read')).allowed).toBe(true);
    s.clock.advance(1_000);
    expect((await o.check(D, 'object:a', 'read')).effect).toBe('missing');
    expect((await o.get(child.id))!.status).toBe('active');
    s.clock.advance(4_000);
    expect((await o.check(B, 'object:a', 'read')).effect).toBe('missing');
  });
});

describe('revoke', () => {
  it('[CAP-32] revoking P disables C and G by the chain check; stored status stays active; default list hides them', async () => {
    const p = await o.grant({ subject: A, resource: 'object:*', rights: ['read'], delegable: true });
    const c = await delegate(p.id, B, { resource: 'object:*', rights: ['read'], delegable: true }, A);
    const g = await delegate(c.id, C, { resource: 'object:a', rights: ['read'] }, B);
    expect((await o.check(C, 'object:a', 'read')).issuerChain.map((x) => x.capId)).toEqual([g.id, c.id, p.id]);
    await s.run((scope) => s.engine.revoke(scope, A, p.id));
    expect((await o.check(B, 'object:a', 'read')).effect).toBe('missing');
    expect((await o.check(C, 'object:a', 'read')).effect).toBe('missing');
    expect((await o.get(c.id))!.status).toBe('active');
    expect((await o.get(g.id))!.status).toBe('active');
    expect(await o.list(B)).toHaveLength(0);
    expect(await o.list(C)).toHaveLength(0);
    expect(await o.list(C, true)).toHaveLength(1);
    expect(s.events.filter((e) => e.type === 'capability.revoked')).toHaveLength(1);
  });

  it(`[CAP-35] stranger denied; holder drops own allow but not own deny; issuer ok; non-revocable denied to all but the host \
bypass`, async () => {
    const allow = await o.grant({ subject: A, resource: 'object:a', rights: ['read'] }, B);
    const deny = await o.grant({ subject: A, resource: 'object:b', rights: ['read'], effect: 'deny' }, B);
    const pinned = await o.grant({ subject: A, resource: 'object:c', rights: ['read'], revocable: false });
    const revoke = (actor: string, id: string) => s.run((scope) => s.engine.revoke(scope, actor, id));
    await expect(revoke(C, allow.id)).rejects.toMatchObject({ code: 'permission_denied' });
    await expect(revoke(A, deny.id)).rejects.toMatchObject({ code: 'permission_denied', message: expect.stringContaining('own deny') });
    await revoke(A, allow.id);
    expect((await o.get(allow.id))!).toMatchObject({ status: 'revoked', revokeCause: 'explicit' });
    await revoke(B, deny.id);
    expect((await o.check(A, 'object:b', 'read')).effect).toBe('missing');
    await expect(revoke('host', pinned.id)).rejects.toMatchObject({ code: 'permission_denied' });
    await expect(revoke(A, pinned.id)).rejects.toMatchObject({ code: 'permission_denied' });
    await s.run((scope) => s.engine.revokeTrusted(scope, pinned.id, 'operator'));
    expect((await o.get(pinned.id))!.status).toBe('revoked');
    await expect(revoke('host', allow.id)).rejects.toMatchObject({ code: 'capability_invalid' });
  });

  it("a holder of covering revoke may revoke others' records", async () => {
    const target = await o.grant({ subject: A, resource: 'object:a', rights: ['read'] });
    await o.grant({ subject: C, resource: 'object:*', rights: ['revoke'] });
    await s.run((scope) => s.engine.revoke(scope, C, target.id));
    expect((await o.get(target.id))!.status).toBe('revoked');
  });
});

describe('deriveAuthority and spawn inheritance', () => {
  it('[CAP-33] a batch with an invalid 3rd spec writes no records, events or audits', async () => {
    await o.grant({ subject: A, resource: 'object:*', rights: ['read', 'write'], delegable: true });
    s.events.length = 0;
    s.audit.length = 0;
    await expect(
      s.run((scope) =>
        s.engine.deriveAuthority(scope, {
          source: A,
          target: B,
          kind: 'task_runner',
          specs: [
            { resource: 'object:a', rights: ['read'] },
            { resource: 'object:b', rights: ['write'] },
            { resource: 'object:c', rights: ['admin'] },
          ],
        }),
      ),
    ).rejects.toMatchObject({ code: 'delegation_denied', message: expect.stringContaining('specs[2]') });
    expect(await o.list(B, true)).toHaveLength(0);
    expect(s.events).toHaveLength(0);
    expect(s.audit).toHaveLength(0);
  });

  it('a valid batch publishes every record and one derive_authority audit; a ceiling narrows', async () => {
    await o.grant({ subject: A, resource: 'object:*', rights: ['read', 'write'], delegable: true });
    const out = await s.run((scope) =>
      s.engine.deriveAuthority(scope, {
        source: A,
        target: B,
        kind: 'task_runner',
        specs: [
          { resource: 'object:a', rights: ['read'] },
          { resource: 'object:b', rights: ['write'] },
        ],
        ceiling: [{ resource: 'object:*', rights: ['read', 'write'] }],
      }),
    );
    expect(out).toHaveLength(2);
    expect(s.audit.filter((e) => e.action === 'capability.derive_authority')).toEqual([
      expect.objectContaining({ details: expect.objectContaining({ count: 2, kind: 'task_runner', ceilingApplied: true }) }),
    ]);
    await expect(
      s.run((scope) =>
        s.engine.deriveAuthority(scope, {
          source: A,
          target: C,
          kind: 'x',
          specs: [{ resource: 'object:a', rights: ['write'] }],
          ceiling: [{ resource: 'object:*', rights: ['read'] }],
        }),
      ),
    ).rejects.toMatchObject({ code: 'delegation_denied', message: expect.stringContaining('ceiling') });
  });

  it('[CAP-34] spawn: an uncovered inherit spec fails the preflight; a covered one gives the child exactly it', async () => {
    await o.grant({ subject: A, resource: 'object:*', rights: ['read', 'materialize'], delegable: true });
    await o.grant({ subject: A, resource: 'object:own', rights: ['write'], usesRemaining: 5, delegable: true });
    await expect(
      s.run((scope) => s.engine.preflightInherit(scope, A, [{ resource: 'object:a', rights: ['write'] }])),
    ).rejects.toMatchObject({ code: 'delegation_denied' });
    // Finite grants never follow.
    await expect(
      s.run((scope) => s.engine.preflightInherit(scope, A, [{ resource: 'object:own', rights: ['write'] }])),
    ).rejects.toMatchObject({ code: 'delegation_denied' });
    const plan = await s.run((scope) => s.engine.preflightInherit(scope, A, [{ resource: 'object:a', rights: ['read'] }]));
    expect(plan).toEqual([expect.objectContaining({ resource: 'object:a', rights: ['read'] })]);
    expect(await o.list(B, true)).toHaveLength(0);
    const got = await s.run((scope) => s.engine.inheritForSpawn(scope, A, B, [{ resource: 'object:a', rights: ['read'] }]));
    expect((await o.list(B)).map((r) => [r.resource, r.rights])).toEqual([['object:a', ['read']]]);
    expect(got[0]!.delegable).toBe(false);
    expect((await o.check(B, 'object:a', 'materialize')).effect).toBe('missing');
  });
});
