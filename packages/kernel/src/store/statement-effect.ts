/**
 * What a SQL statement does to the tables the store memo caches, decided once per prepared statement: nothing (a
 * read, BEGIN, COMMIT, SAVEPOINT, RELEASE), one table (INSERT, UPDATE, DELETE, REPLACE), or anything (ROLLBACK,
 * ROLLBACK TO, DDL, anything not recognised: the memo then drops every entry, which is always safe).
 *
 * @example
 * statementEffect('update "processes" set "status" = ? where "pid" = ?'); // { kind: 'table', table: 'processes' }
 */
export type StatementEffect = { readonly kind: 'none' } | { readonly kind: 'table'; readonly table: string } | { readonly kind: 'all' };

const NONE: StatementEffect = { kind: 'none' };
const ALL: StatementEffect = { kind: 'all' };
const WRITE =
  /^\s*(?:insert(?:\s+or\s+\w+)?\s+into|replace\s+into|update(?:\s+or\s+\w+)?|delete\s+from)\s+(?:"([^"]+)"|`([^`]+)`|([A-Za-z_][\w]*))/i;
// PostgreSQL's session statements (`set search_path`, `show`, `listen`, `lock`) change no rows either.
const HARMLESS = /^\s*(?:select|begin|commit|end|savepoint|release|explain|set|show|listen|unlisten|notify|lock)\b/i;

export function statementEffect(sql: string): StatementEffect {
  const w = WRITE.exec(sql);
  if (w) return { kind: 'table', table: (w[1] ?? w[2] ?? w[3])! };
  if (HARMLESS.test(sql)) return NONE;
  // WITH ... SELECT reads; WITH ... INSERT/UPDATE/DELETE writes a table we do not parse: drop everything.
  if (/^\s*with\b/i.test(sql) && !/\b(?:insert|update|delete|replace)\b/i.test(sql)) return NONE;
  return ALL;
}
