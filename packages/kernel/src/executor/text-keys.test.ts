import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TextKeys } from './text-keys.js';

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest();

describe('TextKeys', () => {
  it('[K-9.11] a key is the first 16 bytes of the SHA-256 in base64url, remembered or not', () => {
    const keys = new TextKeys();
    for (const text of ['Goal:\nship it', '', 'é\u{1F600} lone \uD800 surrogate', 'x'.repeat(5_000)]) {
      const digest = sha(text);
      const first = keys.of(text);
      expect(first).toEqual({ key: digest.toString('base64url', 0, 16), first: digest[0] });
      expect(first.key).toHaveLength(22);
      // The second lookup is served from the memo (a new string of the same text) and is the same key.
      expect(keys.of([...text].join(''))).toEqual(first);
    }
  });

  it('[K-9.11] the memo holds at most its character bound: past it, it starts over and still keys correctly', () => {
    const keys = new TextKeys(100);
    keys.of('a'.repeat(60));
    expect(keys.size).toBe(1);
    keys.of('b'.repeat(30));
    expect(keys.size).toBe(2);
    const c = 'c'.repeat(20); // 60 + 30 + 20 > 100: the memo starts over with this text
    expect(keys.of(c).key).toBe(sha(c).toString('base64url', 0, 16));
    expect(keys.size).toBe(1);
  });
});
