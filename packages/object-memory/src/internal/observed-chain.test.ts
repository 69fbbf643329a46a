import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { sqliteMigrationKit } from '@libos/sdk';
import { beforeEach, describe, expect, test } from 'vitest';
import type { Provenance } from '../object-record.js';
import { migrations } from './migrations.js';
import { CHAIN_MOST, fullProvenance, ObservedChains } from './observed-chain.js';
import type { OmDb } from './schema.js';

const oids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `obj_${String(from + i).padStart(16, '0')}`);

describe('ObservedChains', () => {
  test('[OM-77.3] each result names what was observed since the last one it chains to', () => {
    const chains = new ObservedChains();
    const first = chains.plan('rt', 'pid_a', 'obj_r1', oids(0, 3));
    expect(first).toMatchObject({ fresh: oids(0, 3) });
    expect(first.parentsFrom).toBeUndefined();
    first.remember();
    const second = chains.plan('rt', 'pid_a', 'obj_r2', oids(0, 5));
    expect(second).toMatchObject({ fresh: oids(3, 5), parentsFrom: 'obj_r1' });
    // Not remembered (its create rolled back): the next one chains to the first still.
    expect(chains.plan('rt', 'pid_a', 'obj_r3', oids(0, 6))).toMatchObject({ fresh: oids(3, 6), parentsFrom: 'obj_r1' });
    // Another process, or the same pid in another runtime instance, has its own chain.
    expect(chains.plan('rt', 'pid_b', 'obj_r4', oids(0, 5)).parentsFrom).toBeUndefined();
    expect(chains.plan('rt2', 'pid_a', 'obj_r5', oids(0, 5)).parentsFrom).toBeUndefined();
  });

  test('[OM-77.3] the same list again (nothing observed since) chains with nothing new', () => {
    const chains = new ObservedChains();
    const list = Object.freeze(oids(0, 4));
    chains.plan('rt', 'pid_a', 'obj_r1', list).remember();
    const again = chains.plan('rt', 'pid_a', 'obj_r2', list);
    expect(again).toMatchObject({ fresh: [], parentsFrom: 'obj_r1' });
    again.remember();
    expect(chains.plan('rt', 'pid_a', 'obj_r3', oids(0, 5))).toMatchObject({ fresh: oids(4, 5), parentsFrom: 'obj_r2' });
  });

  test('[OM-77.3] a flow that did not observe everything the last link did starts a new chain', () => {
    const chains = new ObservedChains();
    chains.plan('rt', 'pid_a', 'obj_r1', oids(0, 3)).remember();
    const other = chains.plan('rt', 'pid_a', 'obj_r2', [...oids(1, 3), ...oids(5, 6)]);
    expect(other.parentsFrom).toBeUndefined();
    expect(other.fresh).toEqual([...oids(1, 3), ...oids(5, 6)]);
  });

  test('[OM-77.3] links are bounded by count and by the ids they hold: the least recently used goes first', () => {
    const chains = new ObservedChains({ linksMost: 2, idsMost: 10 });
    chains.plan('rt', 'pid_a', 'obj_a1', oids(0, 6)).remember();
    chains.plan('rt', 'pid_b', 'obj_b1', oids(0, 6)).remember(); // 12 ids: pid_a's link goes
    expect(chains.plan('rt', 'pid_a', 'obj_a2', oids(0, 6)).parentsFrom).toBeUndefined();
    expect(chains.plan('rt', 'pid_b', 'obj_b2', oids(0, 6)).parentsFrom).toBe('obj_b1');
    const small = new ObservedChains({ linksMost: 2 });
    for (const pid of ['pid_a', 'pid_b', 'pid_c']) small.plan('rt', pid, `obj_${pid}`, oids(0, 1)).remember();
    expect(small.plan('rt', 'pid_a', 'obj_x', oids(0, 1)).parentsFrom).toBeUndefined();
    expect(small.plan('rt', 'pid_c', 'obj_y', oids(0, 1)).parentsFrom).toBe('obj_pid_c');
  });

  test(`[OM-77.3] a chain is at most ${CHAIN_MOST} links deep: then the list is written whole again`, () => {
    const chains = new ObservedChains();
    const depths: boolean[] = [];
    for (let i = 1; i <= CHAIN_MOST + 3; i++) {
      const plan = chains.plan('rt', 'pid_a', `obj_r${i}`, oids(0, i));
      depths.push(plan.parentsFrom !== undefined);
      plan.remember();
    }
    expect(depths.indexOf(false, 1)).toBe(CHAIN_MOST + 1);
  });
});

describe('fullProvenance', () => {
  let db: OmDb;
  const put = async (oid: string, provenance: Partial<Provenance>) => {
    const p = { created_from_action: 'test', parent_oids: [], source_refs: [], source_operation_ids: [], ...provenance };
    await db
      .insertInto('om_objects')
      .values({
        oid,
        namespace: 'ns',
        name: oid,
        type: 'tool_result',
        schema_version: '1',
        version: 1,
        immutable: 1,
        metadata: '{}',
        labels: '{}',
        provenance: JSON.stringify(p),
        payload: '{}',
        owner_kind: 'process',
        owner_id: 'pid_a',
        lifecycle_state: 'live',
        created_by: 'runtime',
        created_at: 'now',
        updated_at: 'now',
        updated_seq: 1,
      } as never)
      .execute();
    return p;
  };
  beforeEach(async () => {
    const k = new Kysely<never>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
    for (const m of migrations) await m.up(k, sqliteMigrationKit(k));
    db = k as unknown as OmDb;
  });

  test('[OM-77.3] merges the parents of the whole chain, once each, and keeps what it read for the next call', async () => {
    await put('obj_r1', { parent_oids: oids(0, 2) });
    await put('obj_r2', { parent_oids: oids(2, 3), parents_from: 'obj_r1' });
    const p3 = await put('obj_r3', { parent_oids: [...oids(3, 4), ...oids(0, 1)], parents_from: 'obj_r2' });
    const known = new Map<string, readonly string[]>();
    const full = await fullProvenance(db, p3, known);
    const [o0, o1, o2, o3] = oids(0, 4);
    expect(full.parent_oids).toEqual([o3, o0, o2, o1]); // its own first, then the chain's, nearest first
    expect('parents_from' in full).toBe(false);
    expect(known.get('obj_r2')).toEqual(expect.arrayContaining(oids(0, 3)));
    const plain = { created_from_action: 'x', parent_oids: ['obj_p'], source_refs: [], source_operation_ids: [] };
    expect(await fullProvenance(db, plain)).toBe(plain);
  });

  test('[OM-77.3] a chain naming an Object the store lacks is store_corrupt, naming it', async () => {
    const p = await put('obj_r9', { parent_oids: [], parents_from: 'obj_gone' });
    await expect(fullProvenance(db, p)).rejects.toMatchObject({ code: 'store_corrupt', message: expect.stringContaining('obj_gone') });
  });
});
