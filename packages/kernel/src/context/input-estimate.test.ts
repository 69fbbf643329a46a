import { describe, expect, it } from 'vitest';
import { BYTES_PER_TOKEN_BOUND, countTokens, estimateInput, tokenizerFor } from './input-estimate.js';

describe('the conservative input estimate', () => {
  it('names the real tokenizer of OpenAI-family models and none for others', () => {
    expect(tokenizerFor('gpt-4o-mini')).toBe('o200k_base');
    expect(tokenizerFor('o3-mini')).toBe('o200k_base');
    expect(tokenizerFor('gpt-4-turbo')).toBe('cl100k_base');
    expect(tokenizerFor('gpt-3.5-turbo')).toBe('cl100k_base');
    expect(tokenizerFor('llama3.1:8b')).toBeNull();
    expect(tokenizerFor('scripted')).toBeNull();
  });

  it('counts with the tokenizer: known token counts of o200k_base and cl100k_base', async () => {
    expect(await countTokens('gpt-4o', 'hello world')).toBe(2);
    expect(await countTokens('gpt-4', 'hello world')).toBe(2);
    // A special-token string in a prompt is text, not an error.
    expect(await countTokens('gpt-4o', '<|endoftext|>')).toBeGreaterThan(1);
  });

  it('bounds other models by UTF-8 bytes / 3, so it errs high on English and on CJK', async () => {
    const english = 'The quick brown fox jumps over the lazy dog. '.repeat(20);
    expect(await countTokens('llama3', english)).toBe(Math.ceil(Buffer.byteLength(english) / BYTES_PER_TOKEN_BOUND));
    expect(await countTokens('llama3', english)).toBeGreaterThan(await countTokens('gpt-4o', english));
    const cjk = '上下文压缩保持窗口之内'.repeat(10);
    expect(await countTokens('llama3', cjk)).toBeGreaterThanOrEqual(await countTokens('gpt-4o', cjk));
  });

  it('a request: every message with its overhead, the tool schemas, never below the bare text', async () => {
    const messages = [
      { role: 'system' as const, content: 'You are a test.' },
      { role: 'user' as const, content: 'LLM context object:\n{"kind":"process_started"}' },
    ];
    const tools = [{ name: 'process_exit', description: 'Finish.', parameters: { type: 'object', properties: {} } }];
    const e = await estimateInput('gpt-4o-mini', messages, tools);
    expect(e.method).toBe('o200k_base');
    let bare = await countTokens('gpt-4o-mini', JSON.stringify(tools));
    for (const m of messages) bare += await countTokens('gpt-4o-mini', m.content);
    expect(e.tokens).toBeGreaterThan(bare);
    expect(await estimateInput('scripted', messages, tools)).toMatchObject({ method: 'utf8_bytes_bound' });
  });
});
