import { randomUUID } from 'node:crypto';
import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import type { LlmMessage } from '../llm/provider.js';
import { joinedFrom } from './message-parts.js';
import { promptTexts, SeenTexts } from './prompt-texts.js';
import { TextKeys } from './text-keys.js';

vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>();
  return { ...original, hash: vi.fn(original.hash) };
});

/** The texts hashed with SHA-256 (`TextKeys.of`) while `fn` ran. */
function hashedBy(fn: () => void): string[] {
  const hash = vi.mocked(crypto.hash);
  hash.mockClear();
  fn();
  return hash.mock.calls.map((c) => String(c[1]));
}

describe('SeenTexts', () => {
  it('[K-9.32] a text seen with its key is known without it, and the other way round', () => {
    const keys = new TextKeys();
    const byKeyFirst = new SeenTexts();
    expect(byKeyFirst.again('Loaded skills:\n## one', keys.of('Loaded skills:\n## one').key)).toBe(false);
    expect(byKeyFirst.again('Loaded skills:\n## one')).toBe(true);
    const byHintFirst = new SeenTexts();
    expect(byHintFirst.again('Goal:\nship it')).toBe(false);
    expect(byHintFirst.again('Goal:\nship it', keys.of('Goal:\nship it').key)).toBe(true);
    expect(byHintFirst.again('Goal:\nship it, now')).toBe(false);
  });
});

describe('promptTexts', () => {
  it('[K-9.32] a paragraph sent for the first time is never hashed; one sent again is hashed once, then remembered', () => {
    const id = randomUUID(); // the key memo is shared by the module: texts of their own
    const goal = `Goal:\nship ${id}`;
    const prompt = (n: number): LlmMessage[] => [{ role: 'user', content: `${goal}\n\nRecent events:\n- event ${n} of ${id}` }];
    const seen = new SeenTexts();
    expect(hashedBy(() => promptTexts(prompt(1), seen))).toEqual([]);
    // The goal is sent again: stored by key, hashed once; the new events are not hashed.
    let second: ReturnType<typeof promptTexts> | undefined;
    expect(hashedBy(() => (second = promptTexts(prompt(2), seen)))).toEqual([goal]);
    expect([...second!.texts.values()]).toEqual([goal]);
    expect(second!.messages[0]!.groups[1]).toEqual([{ text: `Recent events:\n- event 2 of ${id}` }]);
    // The goal's group (its key alone) is sent again in the third: hashed once, then stored by key.
    let third: ReturnType<typeof promptTexts> | undefined;
    expect(hashedBy(() => (third = promptTexts(prompt(3), seen)))).toEqual([...second!.texts.keys()]);
    expect(third!.texts.get([...second!.texts.keys()][0]!)).toBe(goal);
    // Remembered: the fourth prompt hashes nothing, and stores the same keys.
    let fourth: ReturnType<typeof promptTexts> | undefined;
    expect(hashedBy(() => (fourth = promptTexts(prompt(4), seen)))).toEqual([]);
    expect(fourth!.texts).toEqual(third!.texts);
  });

  it('[K-9.32] a stable part is hashed once, when it is first cut; its groups only from their second sending', () => {
    const id = randomUUID();
    const skills = Array.from({ length: 20 }, (_, i) => `## skill ${i} ${id}\nbody`).join('\n\n');
    const message = (n: number): LlmMessage => {
      const parts = [
        { text: `Process: p${n}`, stable: false },
        { text: skills, stable: true },
      ];
      return joinedFrom({ role: 'user', content: parts.map((p) => p.text).join('\n\n') }, parts);
    };
    const seen = new SeenTexts();
    const first = hashedBy(() => promptTexts([message(1)], seen));
    expect(first).toEqual(skills.split('\n\n')); // keyed with its part; no group of keys yet
    // Sent again: stored by key, in groups sent for the first time (lists of keys, not hashed).
    expect(hashedBy(() => promptTexts([message(2)], seen))).toEqual([]);
    const third = hashedBy(() => promptTexts([message(3)], seen));
    expect(third.length).toBeGreaterThan(0);
    expect(third.every((t) => /^[\w-]{22}(\n[\w-]{22})*$/.test(t))).toBe(true); // group texts: keys, one per line
    expect(hashedBy(() => promptTexts([message(4)], seen))).toEqual([]);
  });
});
