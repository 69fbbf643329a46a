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

describe('finite uses', () => {
  it('[CAP-13] a 1-use allow: first require ok, second denied; uses 0, revoked/exhausted, event', async () => {
    const g = await o.grant({ subject: A, resource: 'object:a', rights: ['read'], usesRemaining: 1 });
    const d = await o.require(A, 'object:a', 'read');
    expect(d).toMatchObject({ allowed: true, consumeId: g.id, policy: 'allow_once' });
    await expect(o.require(A, 'object:a', 'read')).rejects.toMatchObject({ code: 'permission_denied' });
    expect(await o.get(g.id)).toMatchObject({ usesRemaining: 0, status: 'revoked', revokeCause: 'exhausted' });
    expect(s.events.filter((e) => e.type === 'capability.revoked')).toEqual([
      { type: 'capability.revoked', data: expect.objectContaining({ capId: g.id, cause: 'exhausted' }) },
    ]);
  });

  it('a use spent in a transaction that rolls back is restored', async () => {
    const g = await o.grant({ subject: A, resource: 'object:a', rights: ['read'], usesRemaining: 1 });
    await expect(
      s.run(async (scope) => {
        await s.engine.authority(scope, A).require('object:a', 'read');
        throw new Error('effect failed');
      }),
    ).rejects.toThrow('effect failed');
    expect(await o.get(g.id)).toMatchObject({ usesRemaining: 1, status: 'active' });
    expect(s.audit.filter((e) => e.action === 'capability.consume')).toHaveLength(0);
  });

  it('[CAP-14] two requires interleaving inside one transaction: exactly one fulfils (CAS)', async () => {
    const g = await o.grant({ subject: A, resource: 'object:a', rights: ['read'], usesRemaining: 1 });
    const results = await s
      .run(async (scope) => {
        const auth = s.engine.authority(scope, A);
        return Promise.allSettled([auth.require('object:a', 'read'), auth.require('object:a', 'read')]);
      })
      .catch((e) => e);
    // Both decided "allow" before either spent: the CAS lets exactly one through.
    expect(Array.isArray(results)).toBe(true);
    const settled = results as PromiseSettledResult<unknown>[];
    expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(settled.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual([
      'permission_denied',
    ]);
    expect(await o.get(g.id)).toMatchObject({ usesRemaining: 0 });
  });

  it('[CAP-15] 3-use allow, 5 concurrent requires: exactly 3 succeed, uses 0', async () => {
    const g = await o.grant({ subject: A, resource: 'object:a', rights: ['read'], usesRemaining: 3 });
    const r = await Promise.allSettled(Array.from({ length: 5 }, () => o.require(A, 'object:a', 'read')));
    expect(r.filter((x) => x.status === 'fulfilled')).toHaveLength(3);
    expect(await o.get(g.id)).toMatchObject({ usesRemaining: 0, status: 'revoked', revokeCause: 'exhausted' });
  });

  it('race: 50 concurrent requires in 50 transactions against a 1-use grant: one wins, 49 denied, one use audited', async () => {
    const g = await o.grant({ subject: A, resource: 'object:a', rights: ['read'], usesRemaining: 1 });
    const r = await Promise.allSettled(Array.from({ length: 50 }, () => o.require(A, 'object:a', 'read')));
    expect(r.filter((x) => x.status === 'fulfilled')).toHaveLength(1);
    const rejected = r.filter((x): x is PromiseRejectedResult => x.status === 'rejected');
    expect(rejected).toHaveLength(49);
    expect(rejected.every((x) => x.reason.code === 'permission_denied')).toBe(true);
    expect(s.audit.filter((e) => e.action === 'capability.consume')).toEqual([
      expect.objectContaining({ target: g.id, details: expect.objectContaining({ usesRemaining: 0 }) }),
    ]);
  });

  it('consume() refuses a decision of another pid', async () => {
    await o.grant({ subject: A, resource: 'object:a', rights: ['read'], usesRemaining: 2 });
    const d = await o.check(A, 'object:a', 'read');
    await expect(s.run((scope) => s.engine.authority(scope, B).consume(d))).rejects.toMatchObject({ code: 'permission_denied' });
    await s.run((scope) => s.engine.authority(scope, A).consume(d));
    expect((await o.check(A, 'object:a', 'read')).matchedIds).toHaveLength(1);
  });
});

describe('reservations', () => {
  it('[CAP-16] require(consume:false) keeps uses; reserve ⇒ 0; commit true; restore afterwards undefined', async () => {
    const g = await o.grant({ subject: A, resource: 'clock:sleep', rights: ['read'], usesRemaining: 1 });
    const d = await o.require(A, 'clock:sleep', 'read', { consume: false });
    expect(await o.get(g.id)).toMatchObject({ usesRemaining: 1 });
    const res = await s.run((scope) => s.engine.reserve(scope, d));
    expect(res).toMatch(/^res_/);
    expect(await o.get(g.id)).toMatchObject({ usesRemaining: 0 });
    expect(await s.run((scope) => s.engine.commitReservation(scope, res!))).toBe(true);
    expect(await s.run((scope) => s.engine.restoreReservation(scope, res!))).toBeUndefined();
    expect(await s.run((scope) => s.engine.commitReservation(scope, res!))).toBe(false);
  });

  it('restore of a certified non-start gives the use back and reactivates an exhausted grant', async () => {
    const g = await o.grant({ subject: A, resource: 'clock:sleep', rights: ['read'], usesRemaining: 1 });
    const d = await o.require(A, 'clock:sleep', 'read', { consume: false });
    const res = await s.run((scope) => s.engine.reserve(scope, d));
    expect(await o.get(g.id)).toMatchObject({ status: 'revoked', revokeCause: 'exhausted' });
    expect(await s.run((scope) => s.engine.restoreReservation(scope, res!))).toBe(1);
    expect(await o.get(g.id)).toMatchObject({ usesRemaining: 1, status: 'active', revokeCause: null });
    expect((await o.check(A, 'clock:sleep', 'read')).allowed).toBe(true);
  });

  it('[CAP-17] revoke invalidates a reservation: restore undefined, revoked, uses 0, commit false', async () => {
    const g = await o.grant({ subject: A, resource: 'clock:sleep', rights: ['read'], usesRemaining: 2 });
    const d = await o.require(A, 'clock:sleep', 'read', { consume: false });
    const res = await s.run((scope) => s.engine.reserve(scope, d));
    await s.run((scope) => s.engine.revoke(scope, 'host', g.id));
    expect(await s.run((scope) => s.engine.restoreReservation(scope, res!))).toBeUndefined();
    expect(await o.get(g.id)).toMatchObject({ status: 'revoked', revokeCause: 'explicit', usesRemaining: 1 });
    expect(await s.run((scope) => s.engine.commitReservation(scope, res!))).toBe(false);
  });

  it('[CAP-18] after a reopen, recovery abandons unproven reservations; restore is undefined', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const file = join(mkdtempSync(join(tmpdir(), 'caps-')), 'store.db');
    const first = await createTestStore({ file });
    const g = await ops(first).grant({ subject: A, resource: 'clock:sleep', rights: ['read'], usesRemaining: 1 });
    const d = await ops(first).require(A, 'clock:sleep', 'read', { consume: false });
    const res = await first.run((scope) => first.engine.reserve(scope, d));
    await first.close();
    const reopened = await createTestStore({ file, migrate: false });
    expect(await reopened.run((scope) => reopened.engine.recoverReservations(scope))).toBe(1);
    expect(await reopened.run((scope) => reopened.engine.restoreReservation(scope, res!))).toBeUndefined();
    expect(await ops(reopened).get(g.id)).toMatchObject({ usesRemaining: 0 });
    const row = await reopened.db.selectFrom('cap_reservations').select('status').where('id', '=', res!).executeTakeFirstOrThrow();
    expect(row.status).toBe('abandoned');
    await reopened.close();
  });

  it('reserve of an unlimited grant needs no reservation', async () => {
    await o.grant({ subject: A, resource: 'object:a', rights: ['read'] });
    const d = await o.require(A, 'object:a', 'read', { consume: false });
    expect(await s.run((scope) => s.engine.reserve(scope, d))).toBeNull();
  });
});

describe('authority transaction', () => {
  it('reserves each finite record once, runs the effect, commits; a throw restores everything', async () => {
    const g = await o.grant({ subject: A, resource: 'object:*', rights: ['read', 'write'], usesRemaining: 2 });
    const checks = [
      { resource: 'object:a', right: 'read' as const },
      { resource: 'object:a', right: 'write' as const },
    ];
    await expect(
      s.run((scope) =>
        s.engine.withAuthority(scope, A, checks, async () => {
          throw new Error('effect failed');
        }),
      ),
    ).rejects.toThrow('effect failed');
    expect(await o.get(g.id)).toMatchObject({ usesRemaining: 2 });
    const n = await s.run((scope) => s.engine.withAuthority(scope, A, checks, async (ds) => ds.length));
    expect(n).toBe(2);
    expect(await o.get(g.id)).toMatchObject({ usesRemaining: 1 });
    const rows = await s.db.selectFrom('cap_reservations').select('status').execute();
    expect(rows.map((r) => r.status)).toEqual(['committed']);
    await o.grant({ subject: A, resource: 'object:b', rights: ['write'], effect: 'deny' });
    await expect(
      s.run((scope) => s.engine.withAuthority(scope, A, [{ resource: 'object:b', right: 'write' }], async () => 1)),
    ).rejects.toMatchObject({ code: 'permission_denied' });
  });
});
