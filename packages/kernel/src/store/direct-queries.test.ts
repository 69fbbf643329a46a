import type { KyselyPlugin, PluginTransformResultArgs, QueryResult, UnknownRow } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { kernelMigrations } from './kernel-schema.js';
import type { KernelStore } from './kernel-database.js';
import { migrate } from './migrate.js';
import { openSqliteStore, type OpenedStore } from './sqlite/open-sqlite.js';
import { inUnitOfWork } from './unit-of-work.js';

const open: OpenedStore[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

async function store(plugins: KyselyPlugin[] = []): Promise<OpenedStore> {
  const s = openSqliteStore(':memory:', { plugins });
  open.push(s);
  await migrate(s.db, [{ owner: '@libos/kernel', migrations: kernelMigrations }], () => new Date(0).toISOString());
  return s;
}

const insertText = (db: KernelStore, key: string) =>
  db
    .insertInto('llm_texts')
    .values({ sha256: key, text: `text of ${key}` })
    .compile();
const textsOf = (db: KernelStore) => db.selectFrom('llm_texts').select(['sha256', 'text']).orderBy('sha256').compile();

describe('direct queries in a unit (K-9.22)', () => {
  it('[K-9.22] a compiled query in a unit runs at once, sees the unit, and gives what kysely gives', async () => {
    const s = await store();
    const [viaUnit, viaKysely] = [await store(), s];
    const results: QueryResult<unknown>[][] = [];
    for (const target of [viaUnit, viaKysely]) {
      const got: QueryResult<unknown>[] = [];
      if (target === viaUnit) {
        await inUnitOfWork(target.db, async (trx) => {
          got.push(await trx.executeQuery(insertText(trx, 'a')));
          got.push(await trx.executeQuery(textsOf(trx))); // its own write, before the unit commits
        });
      } else {
        got.push(await target.db.executeQuery(insertText(target.db, 'a')));
        got.push(await target.db.executeQuery(textsOf(target.db)));
      }
      results.push(got);
    }
    expect(results[0]).toEqual(results[1]);
    expect(results[0]![1]!.rows).toEqual([{ sha256: 'a', text: 'text of a' }]);
  });

  it('[K-9.22] a failed direct query rejects as it does through kysely; the unit keeps its other writes', async () => {
    const s = await store();
    await inUnitOfWork(s.db, async (trx) => {
      await trx.executeQuery(insertText(trx, 'kept'));
      const bad = trx.executeQuery({ ...insertText(trx, 'x'), sql: 'insert into no_such_table (x) values (?)' });
      await expect(bad).rejects.toThrow(/no such table: no_such_table/);
    });
    expect((await s.db.executeQuery(textsOf(s.db))).rows).toEqual([{ sha256: 'kept', text: 'text of kept' }]);
  });

  it('[K-9.22] once its unit has ended, the handle goes through kysely, which refuses it', async () => {
    const s = await store();
    let ended: KernelStore | undefined;
    await inUnitOfWork(s.db, async (trx) => {
      ended = trx;
    });
    await expect((async () => ended!.executeQuery(textsOf(ended!)))()).rejects.toThrow(/already committed/);
  });

  it('[K-9.22] a store opened with kysely plugins runs every query through kysely, so result plugins still apply', async () => {
    let transformed = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> => {
        transformed++;
        return args.result;
      },
    };
    const s = await store([counting]);
    transformed = 0;
    await inUnitOfWork(s.db, async (trx) => {
      await trx.executeQuery(textsOf(trx));
    });
    expect(transformed).toBe(1);
  });
});
