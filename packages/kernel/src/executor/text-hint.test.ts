import { describe, expect, it } from 'vitest';
import { textHint } from './text-hint.js';

describe('textHint', () => {
  it('[K-9.32] a hint is a function of the text: the same for equal texts built apart, a safe integer', () => {
    const texts = ['', 'a', 'Recent events:\n- none', 'é\u{1F600} lone \uD800 surrogate', 'x'.repeat(20_000)];
    for (const text of texts) {
      const hint = textHint(text);
      expect(Number.isSafeInteger(hint) && hint >= 0).toBe(true);
      expect(textHint([...text].join(''))).toBe(hint);
    }
  });

  it('[K-9.32] 200,000 distinct paragraphs, most alike but for a digit or an order, share no hint', () => {
    const hints = new Set<number>();
    for (let i = 0; i < 100_000; i++) {
      hints.add(textHint(`- tool_called call_${i.toString(16).padStart(16, '0')} get_current_time`));
      hints.add(textHint(`${[...`${i}`].reverse().join('')} event`));
    }
    expect(hints.size).toBe(200_000);
  });
});
