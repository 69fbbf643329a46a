import type { OwnershipResolver, Right } from '@libos/sdk';
import { RIGHTS } from '@libos/sdk';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuthorityDecision } from './decision.js';
import { createAuthorityEngine } from './engine.js';
import type { Db } from './internal/store.js';
import { A, B, ops } from './internal/testing/helpers.js';
import { counterIds, countRowsRead, createTestStore, fakeClock, type TestStore } from './internal/testing/test-store.js';

/** What object-memory gives a creator on a mutable Object. */
const OWNER_RIGHTS: readonly Right[] = ['read', 'write', 'link', 'diff', 'materialize', 'delete', 'grant'];
const META = { granted_by: 'test', reason: 'creator handle' };

/** An ownership resolver over a table `test_owned`, as a plugin would keep it (owner indexed). */
const resolver: OwnershipResolver = {
  kind: 'object',
  async ownerOf(store, body) {
    const row = await (store as Db).selectFrom('test_owned').selectAll().where('body', '=', body).executeTakeFirst();
    return row ? { body: row.body, owner: row.owner, rights: JSON.parse(row.rights), since: row.since, metadata: META } : null;
  },
  async ownedBy(store, owner) {
    const rows = await (store as Db)
      .selectFrom('test_owned')
      .selectAll()
      .where('owner', '=', owner)
      .orderBy('since')
      .orderBy('body')
      .execute();
    return rows.map((row) => ({ body: row.body, owner: row.owner, rights: JSON.parse(row.rights), since: row.since, metadata: META }));
  },
};

const stores: TestStore[] = [];
afterEach(async () => {
  while (stores.length > 0) await stores.pop()!.close();
});

async function open(withOwners: boolean, sqlite?: Database.Database): Promise<TestStore> {
  const clock = fakeClock();
  const engine = createAuthorityEngine({ clock, ids: counterIds(), ...(withOwners ? { owners: [resolver] } : {}) });
  const s = await createTestStore({ clock, engine, ...(sqlite ? { sqlite } : {}) });
  await s.db.schema
    .createTable('test_owned')
    .addColumn('body', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text')
    .addColumn('rights', 'text')
    .addColumn('since', 'text')
    .execute();
  await s.db.schema.createIndex('test_owned_owner').on('test_owned').column('owner').execute();
  stores.push(s);
  return s;
}

/** Creates `oid` owned by `owner`: a stored creator grant (the old way) or a recorded ownership (the new way). */
async function own(s: TestStore, owner: string, oid: string, materialised: boolean): Promise<string> {
  return s.run(async (scope) => {
    const since = scope.clock.now().toISOString();
    await (scope.store as Db)
      .insertInto('test_owned')
      .values({ body: oid, owner, rights: JSON.stringify(OWNER_RIGHTS), since })
      .execute();
    const spec = { subject: owner, resource: `object:${oid}`, rights: OWNER_RIGHTS };
    const id = await scope.authorityFor(owner).grantTrusted(materialised ? { ...spec, metadata: META } : { ...spec, ownership: true });
    s.clock.advance(1000);
    return id;
  });
}

/** A decision without the ids that differ between a stored and an implicit record. */
function shape(d: AuthorityDecision, ownerIds: readonly string[]) {
  const name = (id: string | undefined) => (id === undefined ? null : ownerIds.includes(id) ? 'owner' : 'other');
  return {
    allowed: d.allowed,
    effect: d.effect,
    policy: d.policy,
    selected: name(d.selectedId),
    matched: d.matchedIds.map(name),
    reason: d.reason.replace(/by \S+/, 'by _'),
  };
}

describe('owner rights derived from ownership', () => {
  it('decide exactly as the stored creator grant did, alone and next to deny, ask and broad grants', async () => {
    const old = await open(false);
    const now = await open(true);
    const oldId = await own(old, A, 'obj_1', true);
    const newId = await own(now, A, 'obj_1', false);
    expect(newId).toBe('cap_own:object:obj_1');
    const extras = [
      { subject: A, resource: 'object:*', rights: ['read'] as Right[] },
      { subject: A, resource: 'object:obj_1', rights: ['delete'] as Right[], effect: 'deny' as const },
      { subject: A, resource: 'object:obj_1', rights: ['write'] as Right[], effect: 'ask' as const },
      { subject: B, resource: 'object:obj_1', rights: ['read'] as Right[] },
    ];
    for (const s of [old, now]) {
      for (const e of extras) {
        await ops(s).grant(e);
        s.clock.advance(1000);
      }
    }
    for (const subject of [A, B]) {
      for (const resource of ['object:obj_1', 'object:obj_2', 'object:*']) {
        for (const right of RIGHTS) {
          const a = shape(await ops(old).check(subject, resource, right), [oldId]);
          const b = shape(await ops(now).check(subject, resource, right), [newId]);
          expect(b, `${subject} ${right} ${resource}`).toEqual(a);
        }
      }
    }
    expect(await ops(now).check(A, 'object:obj_1', 'read')).toMatchObject({
      allowed: true,
      selectedId: newId,
      issuerChain: [{ capId: newId, issuer: A }],
    });
  });

  it('are recorded with the same audit and event as an issue, and store no grant row', async () => {
    const s = await open(true);
    const id = await own(s, A, 'obj_1', false);
    expect(s.events.map((e) => e.type)).toEqual(['capability.granted']);
    expect(s.events[0]!.data).toMatchObject({
      capId: id,
      subject: A,
      resource: 'object:obj_1',
      rights: [...OWNER_RIGHTS].sort((x, y) => RIGHTS.indexOf(x) - RIGHTS.indexOf(y)),
      effect: 'allow',
      issuer: A,
      parentCapId: null,
    });
    expect(s.audit.map((a) => a.action)).toEqual(['capability.issue']);
    expect(s.audit[0]).toMatchObject({
      target: 'object:obj_1',
      decision: 'issued',
      details: { capId: id, subject: A, checked: false, ownership: true, delegable: false, revocable: true, usesRemaining: null },
    });
    expect(await s.db.selectFrom('cap_grants').selectAll().execute()).toEqual([]);
    const rec = await ops(s).get(id);
    expect(rec).toMatchObject({
      id,
      subject: A,
      resource: 'object:obj_1',
      effect: 'allow',
      issuer: A,
      delegable: false,
      revocable: true,
      status: 'active',
      metadata: META,
    });
    expect((await ops(s).list(A)).map((r) => r.id)).toEqual([id]);
    expect(await ops(s).list(B)).toEqual([]);
  });

  it('refuse to record rights the resolver does not confirm', async () => {
    const s = await open(true);
    await own(s, A, 'obj_1', false);
    const record = (spec: Record<string, unknown>, issuer = A) =>
      s.run((scope) => s.engine.issueTrusted(scope, { ownership: true, ...spec } as never, issuer));
    const base = { subject: A, resource: 'object:obj_1', rights: OWNER_RIGHTS };
    await expect(record({ ...base, subject: B }, B)).rejects.toMatchObject({ code: 'capability_invalid', details: { field: 'subject' } });
    await expect(record(base, B)).rejects.toMatchObject({ code: 'capability_invalid', details: { field: 'issuer' } });
    await expect(record({ ...base, rights: ['read'] })).rejects.toMatchObject({ code: 'capability_invalid', details: { field: 'rights' } });
    await expect(record({ ...base, delegable: true })).rejects.toMatchObject({
      code: 'capability_invalid',
      details: { field: 'delegable' },
    });
    await expect(record({ ...base, resource: 'object:*' })).rejects.toMatchObject({
      code: 'capability_invalid',
      details: { field: 'resource' },
    });
    await expect(record({ ...base, resource: 'clock:now' })).rejects.toMatchObject({
      code: 'capability_invalid',
      details: { field: 'resource' },
    });
    await expect(record({ ...base, resource: 'object:obj_9' })).rejects.toMatchObject({
      code: 'capability_invalid',
      details: { field: 'subject' },
    });
    expect(() => createAuthorityEngine({ clock: fakeClock(), owners: [resolver, resolver] })).toThrowError(/two ownership resolvers/);
  });

  it('revoke like the stored grant: relinquished, hidden from list, its transfers dead, never recorded again', async () => {
    const s = await open(true);
    const id = await own(s, A, 'obj_1', false);
    const toB = await s.run((scope) => s.engine.issue(scope, A, { subject: B, resource: 'object:obj_1', rights: ['read'] }));
    expect(toB).toMatchObject({ parentCapId: id, issuerCapId: id, issuer: A });
    expect((await ops(s).check(B, 'object:obj_1', 'read')).allowed).toBe(true);
    await expect(s.run((scope) => s.engine.revoke(scope, B, id))).rejects.toMatchObject({ code: 'permission_denied' });
    await s.run((scope) => s.engine.revoke(scope, A, id));
    expect(s.events.at(-1)).toMatchObject({ type: 'capability.revoked', data: { capId: id, subject: A, cause: 'explicit' } });
    expect(await ops(s).check(A, 'object:obj_1', 'read')).toMatchObject({ allowed: false, effect: 'missing' });
    expect(await ops(s).check(B, 'object:obj_1', 'read')).toMatchObject({ allowed: false, effect: 'missing' });
    expect(await ops(s).list(A)).toEqual([]);
    expect((await ops(s).list(A, true)).map((r) => [r.id, r.status])).toEqual([[id, 'revoked']]);
    expect(await ops(s).get(id)).toMatchObject({ status: 'revoked', revokeCause: 'explicit' });
    await expect(s.run((scope) => s.engine.revoke(scope, A, id))).rejects.toMatchObject({ code: 'capability_invalid' });
    await expect(
      s.run((scope) => scope.authorityFor(A).grantTrusted({ subject: A, resource: 'object:obj_1', rights: OWNER_RIGHTS, ownership: true })),
    ).rejects.toMatchObject({
      code: 'capability_invalid',
    });
  });

  it('delegate, hand over through a handle and duplicate on fork as the stored grant did', async () => {
    const s = await open(true);
    const id = await own(s, A, 'obj_1', false);
    await expect(
      s.run((scope) => s.engine.delegate(scope, id, B, { resource: 'object:obj_1', rights: ['read'] }, A)),
    ).rejects.toMatchObject({ code: 'delegation_denied' });
    await expect(
      s.run((scope) => s.engine.inheritForSpawn(scope, A, B, [{ resource: 'object:obj_1', rights: ['read'] }])),
    ).rejects.toMatchObject({ code: 'delegation_denied' });
    expect(await s.run((scope) => s.engine.authorizeHandle(scope, A, id, 'object:obj_1', 'write'))).toMatchObject({
      allowed: true,
      selectedId: id,
    });
    expect(await s.run((scope) => s.engine.authorizeHandle(scope, B, id, 'object:obj_1', 'read'))).toMatchObject({ allowed: false });
    const dup = await s.run((scope) => s.engine.duplicateAuthority(scope, A, B, 'fork'));
    expect(dup.copied).toHaveLength(1);
    expect(dup.copied[0]).toMatchObject({
      subject: B,
      resource: 'object:obj_1',
      parentCapId: id,
      rights: expect.arrayContaining(['read', 'write', 'grant']),
    });
    expect((await ops(s).check(B, 'object:obj_1', 'write')).allowed).toBe(true);
    await s.run((scope) => s.engine.revoke(scope, 'host', id));
    expect((await ops(s).check(B, 'object:obj_1', 'write')).allowed).toBe(false);
  });

  it('an owner of 10,000 resources (and 10,000 other grants) decides as an owner of 1 and reads no more grant rows per check', async () => {
    const sqlite = new Database(':memory:');
    const counter = countRowsRead(sqlite, 'cap_grants');
    const s = await open(true, sqlite);
    const one = 'pid_0000000000000001';
    const many = 'pid_0000000000000002';
    await own(s, one, 'obj_one', false);
    await own(s, many, 'obj_many', false);
    await s.run(async (scope) => {
      for (let i = 0; i < 9_999; i++)
        await (scope.store as Db)
          .insertInto('test_owned')
          .values({ body: `obj_${i}`, owner: many, rights: '["read"]', since: '2030-01-01T00:00:00.000Z' })
          .execute();
    });
    // The big owner also holds 10,000 stored grants on other exact resources of the same kind.
    await s.run(async (scope) => {
      for (let i = 0; i < 10_000; i++)
        await s.engine.issueTrusted(scope, { subject: many, resource: `object:held_${i}`, rights: ['read'] }, 'host');
    });
    for (const pid of [one, many]) {
      await ops(s).grant({ subject: pid, resource: 'object:*', rights: ['link'] });
      await ops(s).grant({ subject: pid, resource: 'clock:now', rights: ['read'] });
    }
    const rowsPerCheck = async (pid: string, resource: string, right: Right): Promise<{ rows: number; d: ReturnType<typeof shape> }> => {
      const before = counter.rows;
      const d = await ops(s).check(pid, resource, right);
      return { rows: counter.rows - before, d: shape(d, [`cap_own:${resource}`]) };
    };
    const cases: [string, Right][] = [
      ['object:obj_X', 'read'],
      ['object:obj_X', 'link'],
      ['object:obj_X', 'admin'],
      ['object:obj_0', 'write'],
      ['clock:now', 'read'],
    ];
    for (const [resource, right] of cases) {
      const small = await rowsPerCheck(one, resource.replace('obj_X', 'obj_one'), right);
      const big = await rowsPerCheck(many, resource.replace('obj_X', 'obj_many'), right);
      expect(big, `${resource} ${right}`).toEqual(small);
      expect(big.rows).toBeLessThanOrEqual(2);
    }
    expect((await ops(s).list(many)).length).toBe(20_002);
  }, 120_000);
});
