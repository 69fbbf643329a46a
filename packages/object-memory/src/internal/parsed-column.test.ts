import { describe, expect, test } from 'vitest';
import { parsedColumn } from './parsed-column.js';

describe('parsedColumn', () => {
  test('[OM-69.1] a text parsed again is the same frozen value; past the kept characters each text still parses', () => {
    const first = parsedColumn<{ title: string }>('{"title":"t"}');
    expect(parsedColumn('{"title":"t"}')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    // 64 metadata texts of ~128 K characters: more than the 4 Mi kept, so the cache starts over on the way
    const big = (i: number) => JSON.stringify({ title: `m${i}`, summary: 's'.repeat(128_000) });
    for (let i = 0; i < 64; i++) expect(parsedColumn<{ title: string }>(big(i)).title).toBe(`m${i}`);
    expect(parsedColumn<{ title: string }>('{"title":"t"}')).toEqual({ title: 't' });
  });
});
