/**
 * What a SQL statement does to the tables the store memo caches, decided once per prepared statement: nothing (a
 * read, BEGIN, COMMIT, SAVEPOINT, RELEASE), one table (INSERT, UPDATE, DELETE, REPLACE), the tables a WITH statement
 * inserts into (when inserts into named tables are all it writes), or anything (ROLLBACK, ROLLBACK TO, DDL, anything
 * not recognised: the memo then drops every entry, which is always safe).
 *
 * @example
 * statementEffect('update "processes" set "status" = ? where "pid" = ?'); // { kind: 'table', table: 'processes', onlyInserts: false }
 */
export type StatementEffect =
  | { readonly kind: 'none' }
  /** `onlyInserts`: the statement can only add rows (INSERT, INSERT OR IGNORE, ON CONFLICT DO NOTHING), never change one. */
  | { readonly kind: 'table'; readonly table: string; readonly onlyInserts: boolean }
  | { readonly kind: 'tables'; readonly tables: readonly string[]; readonly onlyInserts: true }
  | { readonly kind: 'all' };

const NONE: StatementEffect = { kind: 'none' };
const ALL: StatementEffect = { kind: 'all' };
const WRITE =
  /^\s*(?:insert(?:\s+or\s+\w+)?\s+into|replace\s+into|update(?:\s+or\s+\w+)?|delete\s+from)\s+(?:"([^"]+)"|`([^`]+)`|([A-Za-z_][\w]*))/i;
// PostgreSQL's session statements (`set search_path`, `show`, `listen`, `lock`) change no rows either.
const HARMLESS = /^\s*(?:select|begin|commit|end|savepoint|release|explain|set|show|listen|unlisten|notify|lock)\b/i;

// An insert that cannot change a row already there: not REPLACE, INSERT OR REPLACE, nor an upsert (a `do update`
// anywhere in the text counts, which errs towards a change).
const INSERT_ONLY = /^\s*insert(?:\s+or\s+ignore)?\s+into\b/i;
const UPSERT = /\bdo\s+update\b/i;

export function statementEffect(sql: string): StatementEffect {
  const w = WRITE.exec(sql);
  if (w) return { kind: 'table', table: (w[1] ?? w[2] ?? w[3])!, onlyInserts: INSERT_ONLY.test(sql) && !UPSERT.test(sql) };
  if (HARMLESS.test(sql)) return NONE;
  if (/^\s*with\b/i.test(sql)) return withEffect(sql);
  return ALL;
}

const WRITE_WORD = /\b(?:insert|update|delete|replace|merge)\b/gi;
const INSERT_INTO = /^insert\s+into\s+"([^"]+)"/i;

/**
 * WITH ... SELECT reads; WITH whose every write is `insert into "<table>"` (the append statement of
 * `postgres/append-statement.ts`) writes those tables; any other write (or a string that merely holds such a word):
 * everything.
 */
function withEffect(sql: string): StatementEffect {
  const tables = new Set<string>();
  for (const m of sql.matchAll(WRITE_WORD)) {
    const into = INSERT_INTO.exec(sql.slice(m.index));
    if (!into) return ALL;
    tables.add(into[1]!);
  }
  return tables.size === 0 ? NONE : { kind: 'tables', tables: [...tables], onlyInserts: true };
}
