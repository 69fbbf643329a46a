// The names PostgreSQL statements are prepared under (K-15.24), no server needed.
import { describe, expect, it } from 'vitest';
import { PreparedNames } from './prepared-names.js';

const resultTypeChanged = () => Object.assign(new Error('cached plan must not change result type'), { code: '0A000' });

describe('PreparedNames', () => {
  it('[K-15.24] one name per text with parameters, the same on every use; no name without parameters', () => {
    const names = new PreparedNames();
    const a = names.of('select * from "processes" where "pid" = $1', 1);
    const b = names.of('select * from "om_objects" where "oid" = $1', 1);
    expect(a).toMatch(/^libos_\d+$/);
    expect(b).not.toBe(a);
    expect(names.of('select * from "processes" where "pid" = $1', 1)).toBe(a);
    expect(names.of('select 1', 0)).toBeUndefined();
  });

  it('[K-15.24] past the limit a new text runs unnamed; texts named before keep their names', () => {
    const names = new PreparedNames(2);
    const first = names.of('q1 $1', 1);
    names.of('q2 $1', 1);
    expect(names.of('q3 $1', 1)).toBeUndefined();
    expect(names.of('q1 $1', 1)).toBe(first);
  });

  it('[K-15.24] a prepared plan refused for a changed result type gets a fresh name; any other error keeps it', () => {
    const names = new PreparedNames();
    const text = 'select * from "libos_meta" where "key" = $1';
    const before = names.of(text, 1);
    expect(names.failed(text, Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(names.failed(text, Object.assign(new Error('feature not supported'), { code: '0A000' }))).toBe(false);
    expect(names.of(text, 1)).toBe(before);
    expect(names.failed(text, resultTypeChanged())).toBe(true);
    const after = names.of(text, 1);
    expect(after).toMatch(/^libos_\d+$/);
    expect(after).not.toBe(before);
  });
});
