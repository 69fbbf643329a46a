import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { notesPluginWithImage } from '../internal/testing/notes-plugin.js';
import type { LlmMessage } from '../llm/provider.js';
import { ScriptedProvider } from '../llm/scripted-provider.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { joinedFrom, keyedParagraphs, PROMPT_CHUNK_SEPARATOR, type MessagePart } from './message-parts.js';
import type { TextKey } from './text-keys.js';

/** A keyOf that counts what it keys. */
function counting() {
  const keyed: string[] = [];
  const keyOf = (text: string): TextKey => {
    keyed.push(text);
    const digest = createHash('sha256').update(text).digest();
    return { key: digest.toString('base64url', 0, 16), first: digest[0]! };
  };
  return { keyed, keyOf };
}

const message = (parts: readonly MessagePart[]): LlmMessage =>
  joinedFrom({ role: 'user', content: parts.map((p) => p.text).join(PROMPT_CHUNK_SEPARATOR) }, parts);

describe('keyedParagraphs', () => {
  it('[K-9.23] a message joined from parts yields exactly the paragraphs of its content, with their keys', () => {
    const { keyOf } = counting();
    const shapes: MessagePart[][] = [
      [
        { text: 'Process: p', stable: false },
        { text: 'Skills:\n- a\n\n## a\nbody\n\n\nafter three newlines', stable: true },
        { text: '', stable: false },
        { text: 'Recent events:\n- x', stable: false },
      ],
      [{ text: '', stable: true }],
      // A part that ends with a newline would merge with the separator: the content is split as a whole instead.
      [
        { text: 'ends with a newline\n', stable: true },
        { text: 'next', stable: false },
      ],
      [
        { text: 'a', stable: false },
        { text: '\nstarts with one', stable: true },
      ],
    ];
    for (const parts of shapes) {
      const m = message(parts);
      const got = keyedParagraphs(m, keyOf);
      const paragraphs = m.content.split(PROMPT_CHUNK_SEPARATOR);
      expect(got.paragraphs).toEqual(paragraphs);
      expect(got.keys).toEqual(paragraphs.map(keyOf));
    }
  });

  it('[K-9.23] a stable part handed again is not keyed again; a message without parts is keyed paragraph by paragraph', () => {
    const { keyed, keyOf } = counting();
    const skills = 'Loaded skills:\n## one\nbody one\n\n## two\nbody two';
    keyedParagraphs(
      message([
        { text: 'Process: p1', stable: false },
        { text: skills, stable: true },
      ]),
      keyOf,
    );
    keyed.length = 0;
    keyedParagraphs(
      message([
        { text: 'Process: p2', stable: false },
        { text: skills, stable: true },
      ]),
      keyOf,
    );
    expect(keyed).toEqual(['Process: p2']);
    keyed.length = 0;
    keyedParagraphs({ role: 'user', content: `Process: p3\n\n${skills}` }, keyOf);
    expect(keyed).toEqual(['Process: p3', 'Loaded skills:\n## one\nbody one', '## two\nbody two']);
  });
});

describe('prompts recorded by parts', () => {
  const rts: Runtime[] = [];
  afterEach(async () => {
    for (const rt of rts.splice(0)) await rt.close();
  });

  it('[K-9.23] every turn of every process reads back exactly as the provider received it', async () => {
    const rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()] });
    rts.push(rt);
    const pids: string[] = [];
    for (const goal of ['first goal', 'second goal']) {
      const p = await rt.spawn({ image: 'notes-agent:v0', goal, budget: { tool_calls: null } });
      pids.push(p.pid);
    }
    await rt.activateSkill(pids[1]!, 'test-notes'); // another set of loaded Skills: other Skill sections
    const turn = [{ tool: 'activate_skill', args: { skill_id: 'test-notes' } }];
    const provider = new ScriptedProvider({ processes: { '*': [turn, turn, [{ tool: 'process_exit', args: { message: 'done' } }]] } });
    await rt.run({ provider });
    const sent = new Map<string, LlmMessage[][]>();
    for (const r of provider.requests) {
      const pid = r.pid ?? 'none';
      sent.set(pid, [...(sent.get(pid) ?? []), r.messages.map((m) => ({ ...m }))]);
    }
    for (const pid of pids) {
      const rows = (await rt.llmCalls({ pid })).sort((a, b) => (a.id < b.id ? -1 : 1)); // ids count up
      expect(rows.length).toBeGreaterThanOrEqual(2);
      expect(rows.map((r) => (r.request as { messages: LlmMessage[] }).messages)).toEqual(sent.get(pid));
    }
  });
});
