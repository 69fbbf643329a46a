import {
  sql,
  type ControlledTransaction,
  type KyselyPlugin,
  type PluginTransformResultArgs,
  type QueryResult,
  type UnknownRow,
} from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { kernelMigrations } from './kernel-schema.js';
import type { KernelDatabase, KernelStore } from './kernel-database.js';
import { executeNow } from './direct-queries.js';
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

/** Counts the calls of kysely's own `method` on the root handle `db` (transactions it begins, queries it runs). */
function counting(db: KernelStore, method: 'startTransaction' | 'executeQuery'): { readonly n: number } {
  const counter = { n: 0 };
  const original = (db[method] as (...args: unknown[]) => unknown).bind(db);
  Object.defineProperty(db, method, {
    configurable: true,
    value: (...args: unknown[]) => {
      counter.n++;
      return original(...args);
    },
  });
  return counter;
}

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

describe('units begun on the free connection (K-9.25)', () => {
  it('[K-9.25] a unit on a free connection begins without kysely; one asked for while another runs waits its turn', async () => {
    const s = await store();
    const starts = counting(s.db, 'startTransaction');
    await inUnitOfWork(s.db, (trx) => trx.executeQuery(insertText(trx, 'a')));
    expect(starts.n).toBe(0);
    const order: string[] = [];
    let second: Promise<unknown> | undefined;
    await inUnitOfWork(s.db, async (trx) => {
      second = inUnitOfWork(s.db, async (t2) => {
        order.push('second begins');
        await t2.executeQuery(insertText(t2, 'c'));
      });
      await new Promise((r) => setTimeout(r, 5));
      order.push('first writes');
      await trx.executeQuery(insertText(trx, 'b'));
    });
    await second;
    expect(order).toEqual(['first writes', 'second begins']);
    expect(starts.n).toBe(1); // the second found the connection held and waited through kysely
    expect((await s.db.executeQuery(textsOf(s.db))).rows.map((r) => (r as { sha256: string }).sha256)).toEqual(['a', 'b', 'c']);
  });

  it('[K-9.25] a root query waits for the open unit to commit, and a unit asked for after it waits for the query', async () => {
    const s = await store();
    const order: string[] = [];
    let rootRead: Promise<unknown> | undefined;
    let later: Promise<unknown> | undefined;
    await inUnitOfWork(s.db, async (trx) => {
      await trx.executeQuery(insertText(trx, 'a'));
      rootRead = s.db.executeQuery(textsOf(s.db)).then((r) => order.push(`root read ${r.rows.length} row`));
      await new Promise((r) => setTimeout(r, 5));
      later = inUnitOfWork(s.db, async () => void order.push('later unit'));
      order.push('unit ends');
    });
    await Promise.all([rootRead, later]);
    expect(order).toEqual(['unit ends', 'root read 1 row', 'later unit']);
  });

  it('[K-9.25] once the store is closed, a unit is refused as kysely refuses it, even on a store never used', async () => {
    const used = await store();
    const unused = openSqliteStore(':memory:');
    for (const s of [used, unused]) {
      await s.close();
      await expect(inUnitOfWork(s.db, async () => 1)).rejects.toThrow(/destroyed|not open/);
    }
  });
});

describe('units committed on their connection (K-9.26)', () => {
  it('[K-9.26] a unit begun at once commits at once: committed as kysely marks it, the connection free again', async () => {
    const s = await store();
    let unit: ControlledTransaction<KernelDatabase> | undefined;
    let kyselyCommits = 0;
    await inUnitOfWork(s.db, async (trx) => {
      unit = trx as ControlledTransaction<KernelDatabase>;
      const commit = unit.commit.bind(unit);
      unit.commit = () => {
        kyselyCommits++;
        return commit();
      };
      await trx.executeQuery(insertText(trx, 'a'));
    });
    expect(kyselyCommits).toBe(0);
    expect(unit?.isCommitted).toBe(true);
    await expect(unit!.commit().execute()).rejects.toThrow(/already committed/);
    // The connection was released: a root read runs, and sees the committed row.
    expect((await s.db.executeQuery(textsOf(s.db))).rows).toHaveLength(1);
  });

  it('[K-9.26] a COMMIT that fails keeps the connection for the rollback, which releases it; nothing of the unit stays', async () => {
    const s = await store();
    s.exec!('create table fk_parent (id text primary key)');
    s.exec!('create table fk_child (parent text references fk_parent (id) deferrable initially deferred)');
    const orphan = sql`insert into fk_child (parent) values ('none')`;
    await expect(
      inUnitOfWork(s.db, async (trx) => {
        await trx.executeQuery(insertText(trx, 'a'));
        await orphan.execute(trx);
      }),
    ).rejects.toThrow(/FOREIGN KEY/);
    expect((await s.db.executeQuery(textsOf(s.db))).rows).toHaveLength(0);
    // The rollback released the connection: the next unit begins and commits on it.
    await inUnitOfWork(s.db, (trx) => trx.executeQuery(insertText(trx, 'b')));
    expect((await s.db.executeQuery(textsOf(s.db))).rows).toHaveLength(1);
  });
});

describe('root queries run at once on the free connection (K-9.32)', () => {
  it('[K-9.32] a root query on a free connection skips kysely and gives what kysely gives; the connection is free after', async () => {
    const s = await store();
    await inUnitOfWork(s.db, (trx) => trx.executeQuery(insertText(trx, 'a')));
    const viaKysely = await s.db.executeQuery(textsOf(s.db));
    const kysely = counting(s.db, 'executeQuery');
    expect(await executeNow(s.db, textsOf(s.db))).toEqual(viaKysely);
    expect(kysely.n).toBe(0);
    // A failed query rejects, and leaves the connection free: a unit still begins at once.
    await expect(executeNow(s.db, sql`select * from no_such_table`.compile(s.db))).rejects.toThrow(/no_such_table/);
    await inUnitOfWork(s.db, (trx) => trx.executeQuery(insertText(trx, 'b')));
    expect((await executeNow(s.db, textsOf(s.db))).rows).toHaveLength(2);
    expect(kysely.n).toBe(0);
  });

  it('[K-9.32] a root query while a unit holds the connection waits its turn through kysely and sees the unit', async () => {
    const s = await store();
    const kysely = counting(s.db, 'executeQuery');
    const order: string[] = [];
    let rootRead: Promise<unknown> | undefined;
    await inUnitOfWork(s.db, async (trx) => {
      await trx.executeQuery(insertText(trx, 'a'));
      rootRead = executeNow(s.db, textsOf(s.db)).then((r) => order.push(`root read ${r.rows.length} row`));
      await new Promise((r) => setTimeout(r, 5));
      order.push('unit ends');
    });
    await rootRead;
    expect(order).toEqual(['unit ends', 'root read 1 row']);
    expect(kysely.n).toBe(1);
  });

  it('[K-9.32] on a closed store a root query is refused as kysely refuses it', async () => {
    const s = await store();
    await s.close();
    await expect(executeNow(s.db, textsOf(s.db))).rejects.toThrow(/destroyed|not open/);
  });
});
