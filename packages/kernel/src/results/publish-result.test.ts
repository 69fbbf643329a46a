import { canonicalJson, DEFAULT_LABELS, sha256Hex, type HostObjectInput, type ServiceScope } from '@libos/sdk';
import { describe, expect, it } from 'vitest';
import { MAX_PUBLISHED_RESULT_CHARS, publishToolResult } from './publish-result.js';

/** A scope whose `objects` service records what it is asked to create. */
function recordingScope() {
  const created: { pid: string; input: HostObjectInput }[] = [];
  const objects = {
    async createForProcess(pid: string, input: HostObjectInput) {
      created.push({ pid, input });
      return { oid: 'obj_0000000000000001', namespace: input.namespace!, name: input.name!, type: input.type, version: 1 };
    },
  };
  return { created, scope: { service: () => objects } as unknown as ServiceScope };
}

const base = {
  pid: 'pid_1',
  name: 'tool_result:call_1',
  title: 't result',
  fields: { tool: 't', call_id: 'call_1' },
  resultField: 'payload',
  labels: DEFAULT_LABELS,
};

describe('the one tool-result publisher', () => {
  it('publishes a result whole, immutable, in the tool-results namespace, handing on what it observed as sources', async () => {
    const { created, scope } = recordingScope();
    await publishToolResult(scope, { ...base, result: { a: 1 }, sourceOids: ['obj_00000000000000aa', 'msg_1'] });
    expect(created).toEqual([
      {
        pid: 'pid_1',
        input: expect.objectContaining({
          type: 'tool_result',
          name: 'tool_result:call_1',
          namespace: 'process:pid_1/tool_results',
          ensureNamespace: true,
          immutable: true,
          payload: { tool: 't', call_id: 'call_1', payload: { a: 1 } },
          sourceOids: ['obj_00000000000000aa', 'msg_1'],
        }),
      },
    ]);
  });

  it('publishes a result over the bound as its digest (sha256, bytes, chars) and a 4,000-char preview', async () => {
    const { created, scope } = recordingScope();
    const big = { text: 'é'.repeat(MAX_PUBLISHED_RESULT_CHARS) };
    await publishToolResult(scope, {
      ...base,
      resultField: 'result',
      result: big,
      sourceOids: [],
      attachToView: false,
      owner: { kind: 'object_task', id: 'task_1' },
    });
    const text = JSON.stringify(big);
    const payload = created[0]!.input.payload as Record<string, unknown>;
    expect(payload).toEqual({
      tool: 't',
      call_id: 'call_1',
      truncated: true,
      result_sha256: sha256Hex(canonicalJson(big)),
      result_bytes: Buffer.byteLength(canonicalJson(big)),
      result_chars: text.length,
      preview: text.slice(0, 4_000),
    });
    expect(created[0]!.input).toMatchObject({ attachToView: false, owner: { kind: 'object_task', id: 'task_1' } });
  });
});
