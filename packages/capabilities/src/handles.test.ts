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

const viaHandle = (pid: string, capId: string, resource: string) =>
  s.run((scope) => s.engine.authorizeHandle(scope, pid, capId, resource, 'read'));

describe('handles', () => {
  it('a broad grant never validates a forged or stale handle', async () => {
    await o.grant({ subject: A, resource: 'object:*', rights: ['read'] });
    const h = await o.grant({ subject: A, resource: 'object:a', rights: ['read'], usesRemaining: 2 });
    const other = await o.grant({ subject: B, resource: 'object:a', rights: ['read'] });
    const ok = await viaHandle(A, h.id, 'object:a');
    expect(ok).toMatchObject({ allowed: true, selectedId: h.id, consumeId: h.id, policy: 'allow_once' });
    expect(await viaHandle(A, 'cap_forged', 'object:a')).toMatchObject({ allowed: false, effect: 'missing' });
    expect(await viaHandle(A, other.id, 'object:a')).toMatchObject({ allowed: false });
    expect(await viaHandle(A, h.id, 'object:b')).toMatchObject({ allowed: false });
    await s.run((scope) => s.engine.revoke(scope, 'host', h.id));
    const stale = await viaHandle(A, h.id, 'object:a');
    expect(stale).toMatchObject({ allowed: false, effect: 'missing' });
    expect(stale.selectedId).toBeUndefined();
  });

  it('a deny anywhere wins over a valid handle', async () => {
    const h = await o.grant({ subject: A, resource: 'object:a', rights: ['read'] });
    await o.grant({ subject: A, resource: 'object:*', rights: ['read'], effect: 'deny' });
    expect(await viaHandle(A, h.id, 'object:a')).toMatchObject({ allowed: false, effect: 'deny' });
  });
});

describe('duplicating transitions', () => {
  it('fork copies live records, never finite ones, and drops rights a deny/ask overlaps', async () => {
    const wide = await o.grant({ subject: A, resource: 'object:*', rights: ['read', 'write'] });
    await o.grant({ subject: A, resource: 'object:secret', rights: ['write'], effect: 'deny' });
    const finite = await o.grant({ subject: A, resource: 'clock:sleep', rights: ['read'], usesRemaining: 1 });
    const plain = await o.grant({ subject: A, resource: 'clock:now', rights: ['read'] });
    const out = await s.run((scope) => s.engine.duplicateAuthority(scope, A, B, 'fork'));
    expect(out.droppedFinite).toEqual([finite.id]);
    expect(out.narrowed).toEqual([{ capId: wide.id, droppedRights: ['write'] }]);
    expect((await o.check(B, 'object:a', 'read')).allowed).toBe(true);
    expect((await o.check(B, 'object:a', 'write')).effect).toBe('missing');
    expect((await o.check(B, 'object:secret', 'write')).effect).toBe('deny');
    expect((await o.check(B, 'clock:sleep', 'read')).effect).toBe('missing');
    // Copies derive from their originals: revoking the original revokes the copy.
    await s.run((scope) => s.engine.revoke(scope, 'host', plain.id));
    expect((await o.check(B, 'clock:now', 'read')).effect).toBe('missing');
    expect(s.audit.filter((e) => e.action === 'capability.transition_filter')).toHaveLength(1);
  });
});
