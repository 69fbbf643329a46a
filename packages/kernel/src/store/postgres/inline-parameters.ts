/**
 * A parameterised statement as plain SQL, its `$n` placeholders replaced by literals: what lets deferred transaction
 * control go to the server in the same round trip as the statement after it (`deferred-control.ts`), as one
 * simple-protocol query. Every value becomes a quoted literal of unknown type, as a parameter is, so PostgreSQL
 * resolves it from its context exactly as it would `$n`: a string as `pg`'s `escapeLiteral` writes it (quotes
 * doubled; with a backslash, an `E'...'` literal with backslashes doubled), a finite number, bigint or boolean as its
 * text, null as NULL.
 *
 * Anything else (a Buffer, a Date, an object, NaN) or SQL the scan cannot read safely (a backslash, a comment or a
 * dollar-quoted string in the statement itself) gives undefined, and the caller sends the statement as it is.
 *
 * @example
 * inlineParameters('select * from "t" where "a" = $1 and "b" = $2', ["it's", 2]);
 * // `select * from "t" where "a" = 'it''s' and "b" = '2'`
 */
export function inlineParameters(sql: string, parameters: readonly unknown[]): string | undefined {
  const literals = literalsOf(parameters);
  return literals && splicePlaceholders(sql, (n) => literals[n - 1]);
}

/**
 * Each value as the quoted literal `inlineParameters` writes for it, or undefined when one cannot be written so.
 *
 * @example
 * literalsOf(["it's", 2, null]); // ["'it''s'", "'2'", 'NULL']
 */
export function literalsOf(parameters: readonly unknown[]): string[] | undefined {
  const literals: string[] = [];
  for (const p of parameters) {
    const literal = literalOf(p);
    if (literal === undefined) return undefined;
    literals.push(literal);
  }
  return literals;
}

/**
 * The highest placeholder `$n` of `sql` (0 when none), read by the same scan as `inlineParameters`; undefined where
 * that scan cannot read it safely.
 *
 * @example
 * highestPlaceholder('select $2 where "a$9" = $1'); // 2
 */
export function highestPlaceholder(sql: string): number | undefined {
  let highest = 0;
  return splicePlaceholders(sql, (n) => ((highest = Math.max(highest, n)), '')) === undefined ? undefined : highest;
}

/**
 * `sql` with each placeholder `$n` outside quotes replaced by `literal(n)`; undefined where the scan cannot read it
 * safely (see `inlineParameters`) or `literal` gives undefined.
 *
 * @example
 * splicePlaceholders(`select $2, '$1'`, (n) => ['NULL', "'x'"][n - 1]); // `select 'x', '$1'`
 */
export function splicePlaceholders(sql: string, literal: (n: number) => string | undefined): string | undefined {
  if (UNREADABLE.test(sql)) return undefined;
  let out = '';
  let from = 0;
  let quote: string | null = null;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (quote !== null) {
      if (c === quote) quote = null; // a doubled quote closes and reopens: the same text
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '$') {
      let j = i + 1;
      while (j < sql.length && sql.charCodeAt(j) >= 48 && sql.charCodeAt(j) <= 57) j++;
      const text = j > i + 1 ? literal(Number(sql.slice(i + 1, j))) : undefined;
      if (text === undefined) return undefined; // `$` that is no placeholder, or one out of range
      out += sql.slice(from, i) + text;
      from = j;
      i = j - 1;
    }
  }
  return quote === null ? out + sql.slice(from) : undefined;
}

/** What the scan does not read: a backslash (escapes in the statement's own strings), comments, dollar quotes. */
const UNREADABLE = /\\|--|\/\*|\$[A-Za-z_]*\$/;

/**
 * `text` as the literal `pg`'s `escapeLiteral` writes (quotes doubled; with a backslash, ` E'...'` with backslashes
 * doubled), by native string search and replace: `escapeLiteral` appends one character at a time, and a call's
 * round trip quotes a few KB of JSON.
 *
 * @example
 * quoteLiteral("a\\b'c"); // ` E'a\\\\b''c'`
 */
export function quoteLiteral(text: string): string {
  const quoted = `'${text.includes("'") ? text.replaceAll("'", "''") : text}'`;
  return text.includes('\\') ? ` E${quoted.replaceAll('\\', '\\\\')}` : quoted;
}

function literalOf(value: unknown): string | undefined {
  if (value === null || value === undefined) return 'NULL';
  switch (typeof value) {
    case 'string':
      return quoteLiteral(value);
    case 'number':
      return Number.isFinite(value) ? `'${value}'` : undefined;
    case 'bigint':
    case 'boolean':
      return `'${value}'`;
    default:
      return undefined;
  }
}
