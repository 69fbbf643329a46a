import { describe, expect, it } from 'vitest';
import type { LlmMessage } from '../llm/provider.js';
import { kernelStores } from '../internal/testing/kernel-store.js';
import { queryLlmCalls, recordLlmCall, type LlmCallInput } from './llm-calls.js';

const store = kernelStores();

const call = (id: string, messages: LlmMessage[], persistFullIo = true): LlmCallInput => ({
  id,
  pid: 'pid_0000000000000001',
  imageId: 'base-agent:v0',
  provider: 'scripted',
  model: 'scripted',
  request: { messages, tools: [{ name: 'process_exit', description: 'Ends.', parameters: { type: 'object' } }], parallelToolCalls: true },
  response: null,
  error: null,
  latencyMs: 1,
  createdAt: new Date(0).toISOString(),
  persistFullIo,
});

const SKILLS = Array.from({ length: 40 }, (_, i) => `## skill ${i}\n${'a long Skill body line. '.repeat(20)}`).join('\n\n');

describe('llm_calls: prompts stored by hash', () => {
  it('a prompt reads back byte for byte, and the paragraphs two prompts share are stored once', async () => {
    const s = await store();
    const first: LlmMessage[] = [
      { role: 'system', content: 'You are a libOS process.' },
      { role: 'user', content: `Goal:\nkeep a ledger\n\n${SKILLS}\n\nRecent events:\n- tool_called get_current_time\n\n` },
    ];
    const second: LlmMessage[] = [
      first[0]!,
      { role: 'user', content: `Goal:\nkeep a ledger\n\n${SKILLS}\n\nRecent events:\n- tool_completed` },
    ];
    await recordLlmCall(s.db, call('llm_1', first));
    await recordLlmCall(s.db, call('llm_2', second));
    const rows = await queryLlmCalls(s.db);
    expect(rows.map((r) => (r.request as { messages: LlmMessage[] }).messages)).toEqual([first, second]);
    expect(rows[0]!.request).toMatchObject({ tools: ['process_exit'], parallel_tool_calls: true });
    const stored = await s.db
      .selectFrom('llm_texts')
      .select((eb) => eb.fn.sum<number>(eb.fn('length', ['text'])).as('n'))
      .executeTakeFirstOrThrow();
    const sent = [...first, ...second].reduce((n, m) => n + m.content.length, 0);
    expect(Number(stored.n)).toBeLessThan(sent * 0.55); // the shared Skill paragraphs once, not twice
    const raw = await s.db.selectFrom('llm_calls').select('request').where('id', '=', 'llm_2').executeTakeFirstOrThrow();
    expect((raw.request as string).length).toBeLessThan(second[1]!.content.length / 5); // hashes, not the 20 KB prompt
  });

  it('without full I/O only a preview and the hash are kept, and no paragraph is stored', async () => {
    const s = await store();
    await recordLlmCall(s.db, call('llm_1', [{ role: 'user', content: SKILLS }], false));
    const [row] = await queryLlmCalls(s.db);
    expect(row!.request).toMatchObject({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), preview: expect.any(String) });
    expect(await s.db.selectFrom('llm_texts').selectAll().execute()).toEqual([]);
  });

  it('a stored prompt whose paragraphs are gone is store_corrupt, naming the table', async () => {
    const s = await store();
    await recordLlmCall(s.db, call('llm_1', [{ role: 'user', content: 'one\n\ntwo' }]));
    await s.db.deleteFrom('llm_texts').execute();
    await expect(queryLlmCalls(s.db)).rejects.toMatchObject({ code: 'store_corrupt', message: expect.stringContaining('llm_texts') });
  });
});
