// PostgreSQL figure (issue 15): the checked call of `call_checked_vs_insert` on a runtime opened on a PostgreSQL
// server against the same call on a SQLite store file, in one interleaved run. The server is LIBOS_BENCH_PG_URL
// (default the local one, trust auth); the bench works in a fresh schema it drops at the end. No server answering:
// the figure prints `RATIO pg_call_vs_sqlite_call skipped (<reason>)` and the run goes on.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { LibosError } from '@libos/sdk';
import { median, msPerOp, sideBySide } from '../lib/measure.mjs';
import { callOk, flushShare, openBenchRuntime, spawnChecked } from '../lib/libos.mjs';
import { ONE_KB } from '../lib/sqlite-floor.mjs';
import { dropSchema, onServer, pg, serverUrl, withSchema } from '../lib/pg-server.mjs';

const NAME = 'pg_call_vs_sqlite_call';
const GOAL = '<=5';

/**
 * What the protocol alone costs, for the stderr notes (not a figure): ms per `select 1` (one round trip) and per
 * begin / one 1 KB insert / commit (a durable commit: the server flushes its WAL), each the median of 5 runs of `n`.
 */
async function serverFloor(url, schema, n) {
  return onServer(url, async (c) => {
    await c.query(`create table ${schema}.bench_floor (id bigint generated always as identity primary key, v text not null)`);
    const ms = async (op) => {
      const runs = [];
      for (let k = 0; k < 5; k++) runs.push(await msPerOp(n, op));
      return median(runs);
    };
    const roundTrip = await ms(() => c.query('select 1'));
    const commit = await ms(async () => {
      await c.query('begin');
      await c.query(`insert into ${schema}.bench_floor (v) values ($1)`, [ONE_KB]);
      await c.query('commit');
    });
    return { roundTrip, commit };
  });
}

/** Statements the runtime sends the server during `fn` (every `query` of any `pg` client: each is a round trip). */
async function countStatements(fn) {
  const { Client } = pg();
  const query = Client.prototype.query;
  let n = 0;
  Client.prototype.query = function counted(...args) {
    n++;
    return query.apply(this, args);
  };
  try {
    await fn();
  } finally {
    Client.prototype.query = query;
  }
  return n;
}

export async function pgFigures(ctx) {
  const url = serverUrl();
  const schema = `libos_bench_${randomBytes(6).toString('hex')}`;
  let onPg;
  try {
    onPg = await openBenchRuntime(withSchema(url, schema));
  } catch (err) {
    // Only "nothing answers there" (unreachable, no such database) skips; anything else is a crash of the figure.
    if (!(err instanceof LibosError && err.code === 'store_not_found')) throw err;
    process.stdout.write(`RATIO ${NAME} skipped (no postgres server)\n`);
    ctx.note(`  ${NAME}: skipped: ${err.message}`);
    return;
  }
  let onSqlite;
  try {
    onSqlite = await openBenchRuntime(join(ctx.dir, 'pg-vs-sqlite.db'));
    const pgCaller = await spawnChecked(onPg);
    const sqliteCaller = await spawnChecked(onSqlite);
    const nCall = ctx.n(200);
    const callBlock = (rt, pid) => async () =>
      (await msPerOp(nCall, () => callOk(rt, pid, 'get_current_time', {}))) + flushShare(rt, nCall);
    // Warm: the first call's texts are prepared on the connection before the second's (K-15.29), one round trip once.
    for (let i = 0; i < 2; i++) await callOk(onPg, pgCaller, 'get_current_time', {});
    const statements = await countStatements(() => callOk(onPg, pgCaller, 'get_current_time', {}));
    const floor = await serverFloor(url, schema, ctx.n(40));
    ctx.note(
      `  ${NAME}: one checked call sends ${statements} statements to the server (a warm call, counted once, untimed); ` +
        `on this server one round trip takes ${floor.roundTrip.toFixed(3)} ms and a durable 1 KB insert (begin, insert, ` +
        `commit) ${floor.commit.toFixed(3)} ms`,
    );
    const r = await sideBySide(ctx, callBlock(onPg, pgCaller), callBlock(onSqlite, sqliteCaller));
    const detail = `get_current_time via rt.call on PostgreSQL (${onPg.location}) vs on a SQLite file (${nCall} a block)`;
    ctx.report(NAME, r, GOAL, detail);
  } finally {
    await onSqlite?.close();
    await onPg.close();
    await dropSchema(url, schema);
  }
}
