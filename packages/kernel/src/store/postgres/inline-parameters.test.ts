// Parameters inlined as literals (inline-parameters.ts): what lets deferred control share a round trip (K-15.20).
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { inlineParameters, quoteLiteral } from './inline-parameters.js';

describe('inlineParameters', () => {
  it('[K-15.20] each placeholder becomes a quoted literal of its value; null is NULL', () => {
    const sql = 'update "t" set "a" = $1, "b" = $2, "c" = $3, "d" = $4 where "e" = $5 and "f" = $6';
    expect(inlineParameters(sql, ["it's", 2.5, true, null, 10n, undefined])).toBe(
      `update "t" set "a" = 'it''s', "b" = '2.5', "c" = 'true', "d" = NULL where "e" = '10' and "f" = NULL`,
    );
  });

  it('[K-15.20] a string with a backslash is an E literal with its backslashes doubled', () => {
    expect(inlineParameters('select $1', ["a\\b'c"])).toBe(`select  E'a\\\\b''c'`);
  });

  it('[K-15.20] $10 is the tenth parameter, not the first followed by 0', () => {
    const params = Array.from({ length: 10 }, (_, i) => `v${i + 1}`);
    expect(inlineParameters('select $10, $1', params)).toBe(`select 'v10', 'v1'`);
  });

  it('[K-15.20] a $ inside quoted text or a quoted name is left as it is', () => {
    expect(inlineParameters(`select '$1' as "$2", $1`, ['x'])).toBe(`select '$1' as "$2", 'x'`);
    expect(inlineParameters(`select 'it''s $1', $1`, ['x'])).toBe(`select 'it''s $1', 'x'`);
  });

  it('[K-15.20] a value or statement it cannot inline safely gives undefined (the statement is sent as it is)', () => {
    for (const value of [Buffer.from('x'), new Date(0), { a: 1 }, [1], Number.NaN, Number.POSITIVE_INFINITY])
      expect(inlineParameters('select $1', [value])).toBeUndefined();
    expect(inlineParameters('select $2', ['only one'])).toBeUndefined();
    expect(inlineParameters('select $0', ['x'])).toBeUndefined();
    for (const sql of [`select E'\\n', $1`, 'select $1 -- note', 'select /* $1 */ $1', 'select $$x$$, $1', "select 'open"])
      expect(inlineParameters(sql, ['x'])).toBeUndefined();
  });

  it("[K-15.20] a string is quoted exactly as pg's escapeLiteral quotes it", () => {
    const texts = ['', "'", "''", '\\', "\\'", "it's", 'a\\b', '{"k":"\\u0000 it\'s"}', "E'x'", '\uffff\u0000 😀', `${'x'.repeat(3000)}'`];
    for (const text of texts) expect(quoteLiteral(text)).toBe(pg.escapeLiteral(text));
  });
});
