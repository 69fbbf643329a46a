// What a query the kernel sent to PostgreSQL runs, read back for tests: the kernel sends a statement that rides in a
// round trip of several as `execute libos_rt_<n>(<literals>)` once it has prepared its text on that connection by SQL
// `PREPARE` (K-15.29). Tests that read the SQL sent (`watchQueries`) see the statement it runs instead, its literals
// in place of its placeholders, so they read what ran whether it went inline (K-15.20) or prepared.
import { createRequire } from 'node:module';
// The kernel's own placeholder scan (what inlined the values the first time), not a copy of it.
import { splicePlaceholders } from '../../../packages/kernel/src/store/postgres/inline-parameters.js';

type Query = (this: object, ...args: unknown[]) => unknown;

/** The kernel's own copy of `pg`'s client class (the one its pool uses). */
export const kernelClient = (createRequire(import.meta.resolve('@libos/kernel'))('pg') as { Client: { prototype: { query: Query } } })
  .Client;

/** Whether `sql` is the kernel preparing a text (K-15.29): a round trip of its own, once per text and connection. */
export const isPrepareTrip = (sql: string): boolean => sql.startsWith('prepare libos_rt_');

/** Texts prepared by `prepare libos_rt_<n> as <text>`, by `pg` client and name. */
const prepared = new WeakMap<object, Map<string, string>>();
const PREPARE = /^prepare (libos_rt_\d+) as ([\s\S]*)$/;

// Installed once, for the life of the test file: a text is prepared once per connection, maybe before a test watches.
const query = kernelClient.prototype.query;
kernelClient.prototype.query = function recorded(this: object, ...args: unknown[]) {
  const text = typeof args[0] === 'string' ? args[0] : '';
  if (isPrepareTrip(text)) {
    let texts = prepared.get(this);
    if (!texts) prepared.set(this, (texts = new Map()));
    // The texts prepared together go in one query (K-15.29); no text of the kernel's holds `; prepare libos_rt_`.
    for (const statement of text.split(/; (?=prepare libos_rt_\d+ as )/)) {
      const [, name, body] = PREPARE.exec(statement)!;
      texts.set(name!, body!);
    }
  }
  return query.apply(this, args);
};

/**
 * `sql` as `client` sent it, with each `execute libos_rt_<n>(…)` replaced by the text prepared under that name on
 * that client, its arguments in place of `$1`, `$2`, ….
 *
 * @example
 * // after the client sent `prepare libos_rt_0 as update "t" set "a" = $1`:
 * expandExecutes(client, "begin; execute libos_rt_0('1')"); // `begin; update "t" set "a" = '1'`
 */
export function expandExecutes(client: object, sql: string): string {
  const texts = prepared.get(client);
  if (!texts) return sql;
  const execute = /execute (libos_rt_\d+)\(/g;
  let out = '';
  let from = 0;
  for (let m = execute.exec(sql); m; m = execute.exec(sql)) {
    const text = texts.get(m[1]!);
    if (text === undefined) throw new Error(`execute of ${m[1]} that this client never prepared`);
    const { args, end } = readArguments(sql, execute.lastIndex);
    const ran = splicePlaceholders(text, (n) => args[n - 1]);
    if (ran === undefined) throw new Error(`libos_rt text the kernel's own scan cannot read: ${text.slice(0, 200)}`);
    out += sql.slice(from, m.index) + ran;
    from = execute.lastIndex = end;
  }
  return out + sql.slice(from);
}

/**
 * The literals of an argument list that starts at `at` (after its `(`): `'…'`, ` E'…'` (`pg`'s escapeLiteral puts a
 * space before the E) or `NULL`, then `, ` or `)`.
 */
function readArguments(sql: string, at: number): { args: string[]; end: number } {
  const args: string[] = [];
  let i = at;
  for (;;) {
    if (sql[i] === ' ') i++;
    const start = i;
    if (sql.startsWith('NULL', i)) i += 4;
    else {
      if (sql[i] === 'E') i++;
      if (sql[i] !== "'") throw new Error(`unreadable argument at ${i} of ${sql.slice(0, 200)}`);
      for (i++; ; i += 2) {
        i = sql.indexOf("'", i);
        if (i < 0) throw new Error(`unterminated argument in ${sql.slice(0, 200)}`);
        if (sql[i + 1] !== "'") break;
      }
      i++;
    }
    args.push(sql.slice(start, i));
    if (sql[i] === ')') return { args, end: i + 1 };
    if (!sql.startsWith(', ', i)) throw new Error(`unreadable argument list at ${i} of ${sql.slice(0, 200)}`);
    i += 2;
  }
}
