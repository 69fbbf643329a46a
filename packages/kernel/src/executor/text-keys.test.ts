import { createHash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { promptTexts, SeenTexts } from './prompt-texts.js';
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
      keys.remember(text, first);
      // Served from the memo for a new string of the same text: the same key.
      expect(keys.of([...text].join(''))).toBe(first);
    }
  });

  it('[K-9.11] only remembered texts are kept, at most the character bound: past it the memo starts over', () => {
    const keys = new TextKeys(100);
    keys.of('never remembered');
    expect(keys.size).toBe(0);
    keys.remember('a'.repeat(60), keys.of('a'.repeat(60)));
    keys.remember('b'.repeat(30), keys.of('b'.repeat(30)));
    expect(keys.size).toBe(2);
    const c = 'c'.repeat(20); // 60 + 30 + 20 > 100: the memo starts over with this text
    keys.remember(c, keys.of(c));
    expect(keys.size).toBe(1);
    expect(keys.of(c).key).toBe(sha(c).toString('base64url', 0, 16));
  });

  it('[K-9.13] a remembered paragraph does not keep the prompt it was cut from', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const keys = new TextKeys();
    const heap = () => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    const before = heap();
    // 200 prompts of ~100 KB, each with its own opening paragraph (as each process's prompt names its pid).
    for (let i = 0; i < 200; i++) {
      const opening = `Process: pid_${String(i).padStart(16, '0')} (image base-agent:v0)`;
      const paragraph = `${opening}\n\n${'Skill body. '.repeat(8_000)}`.split('\n\n')[0]!;
      keys.remember(paragraph, keys.of(paragraph));
    }
    const grown = heap() - before;
    expect(keys.size).toBe(200);
    // The 200 openings are ~12 KB of text; holding their prompts would be ~19 MB.
    expect(grown).toBeLessThan(2_000_000);
  });

  it('[K-9.11] a prompt stores the same keys the second time, when its repeated paragraphs come from the memo', () => {
    const prompt = (n: number) => [{ role: 'user' as const, content: `Skill body\n\nmore of it\n\nRecent events:\n- event ${n}` }];
    const seen = new SeenTexts();
    const first = promptTexts(prompt(1), seen);
    const second = promptTexts(prompt(2), seen);
    const third = promptTexts(prompt(3), new SeenTexts());
    // Paragraph keys sent twice are stored by key; the keys agree with a cold runtime's (no memo behind it).
    for (const [key, text] of second.texts) expect(key).toBe(sha(text).toString('base64url', 0, 16));
    expect(second.texts.size).toBeGreaterThan(0);
    expect(first.messages[0]!.groups.length).toBe(third.messages[0]!.groups.length);
  });
});
