import { preparedQuery } from '@libos/sdk';
import { describe, expect, it } from 'vitest';
import { kernelStores } from '../../internal/testing/kernel-store.js';
import type { KernelStore } from '../kernel-database.js';

const kernelStore = kernelStores();

describe('SqliteStoreCompiler', () => {
  it('[K-9.12] an integer LIMIT and OFFSET are written into the statement, and the rows are the same as bound ones', async () => {
    const s = await kernelStore();
    const at = new Date(0).toISOString();
    const rows = Array.from({ length: 30 }, (_, i) => ({ id: `evt_${i}`, ts: at, pid: 'pid_a', type: 'note', data: `{"i":${i}}` }));
    await s.db.insertInto('events').values(rows).execute();
    const page = s.db.selectFrom('events').select('id').where('pid', '=', 'pid_a').orderBy('seq', 'desc').limit(5).offset(20);
    const compiled = page.compile();
    expect(compiled.sql).toMatch(/ limit 5 offset 20$/);
    expect(compiled.parameters).toEqual(['pid_a']);
    expect((await page.execute()).map((r) => r.id)).toEqual(['evt_9', 'evt_8', 'evt_7', 'evt_6', 'evt_5']);
  });

  it('[K-9.12] a count that is not a safe integer, or a prepared query argument, stays a bound parameter', async () => {
    const s = await kernelStore();
    const fractional = s.db.selectFrom('events').select('id').limit(2.5).compile();
    expect(fractional.sql).toMatch(/ limit \?$/);
    expect(fractional.parameters).toEqual([2.5]);
    const byArgument = preparedQuery(2, (db: KernelStore, [pid, n]) =>
      db
        .selectFrom('events')
        .select('id')
        .where('pid', '=', pid!)
        .limit(n as unknown as number),
    );
    const q = byArgument(s.db, ['pid_a', 3]);
    expect(q.sql).toMatch(/ limit \?$/);
    expect(q.parameters).toEqual(['pid_a', 3]);
    // A constant inside a prepared query is a literal like any other.
    const constant = preparedQuery(1, (db: KernelStore, [pid]) => db.selectFrom('events').select('id').where('pid', '=', pid!).limit(20));
    expect(constant(s.db, ['pid_b']).sql).toMatch(/ limit 20$/);
  });
});
