import { describe, expect, it } from 'vitest';
import { parseRights } from './rights.js';

describe('rights', () => {
  it('[CAP-5] rejects *, empty, delegate and unknown rights, naming the value', () => {
    expect(() => parseRights(['*'])).toThrowError(
      expect.objectContaining({ code: 'rights_invalid', message: expect.stringContaining('"*"') }),
    );
    expect(() => parseRights([])).toThrowError(expect.objectContaining({ code: 'rights_invalid' }));
    expect(() => parseRights(['delegate'])).toThrowError(
      expect.objectContaining({ code: 'rights_invalid', message: expect.stringContaining('"delegate"') }),
    );
    expect(() => parseRights(new Array(17).fill('read'))).toThrowError(/at most 16/);
  });

  it('deduplicates into canonical order', () => {
    expect(parseRights(['write', 'read', 'read'])).toEqual(['read', 'write']);
  });
});
