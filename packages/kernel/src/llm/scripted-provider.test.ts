import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LibosError } from '@libos/sdk';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { loadLlmScriptFile, parseLlmScript } from './llm-script.js';
import type { LlmRequest } from './provider.js';
import { ScriptedProvider } from './scripted-provider.js';

const EXIT_DONE = { name: 'process_exit', arguments: { payload: { done: true } } };

function request(pid?: string, extra: Partial<LlmRequest> = {}): LlmRequest {
  return {
    messages: [
      { role: 'system', content: 'You are a libOS process.' },
      { role: 'user', content: `Goal of ${pid ?? 'nobody'}` },
    ],
    tools: [{ name: 'process_exit', description: 'Ends the process.', parameters: { type: 'object' } }],
    parallelToolCalls: false,
    ...(pid === undefined ? {} : { pid }),
    ...extra,
  };
}

async function names(provider: ScriptedProvider, pid?: string): Promise<string[]> {
  return (await provider.completeAction(request(pid))).toolCalls.map((c) => c.name);
}

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('ScriptedProvider', () => {
  test('returns a flat script turn by turn in order across calls, whatever the pid, with mock_<n> ids and usage {1,1,2}', async () => {
    const provider = new ScriptedProvider([
      [
        { tool: 'list_objects', args: { limit: 5 } },
        { tool: 'read_object', args: { name: 'a' } },
      ],
      [{ tool: 'process_exit', args: { message: 'bye' } }],
    ]);
    const first = await provider.completeAction(request('pid_a'));
    expect(first.toolCalls).toEqual([
      { id: 'mock_1', name: 'list_objects', arguments: { limit: 5 } },
      { id: 'mock_2', name: 'read_object', arguments: { name: 'a' } },
    ]);
    expect(first).toMatchObject({ content: null, api: 'scripted', model: 'scripted' });
    expect(first.usage).toEqual({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 });
    const second = await provider.completeAction(request('pid_b'));
    expect(second.toolCalls).toEqual([{ id: 'mock_3', name: 'process_exit', arguments: { message: 'bye' } }]);
  });

  test('accepts { turns: [...] } like a flat array and reports the configured model name', async () => {
    const provider = new ScriptedProvider({ turns: [[{ tool: 'whoami' }], []] }, { model: 'demo-script' });
    const first = await provider.completeAction(request());
    expect(first.toolCalls).toEqual([{ id: 'mock_1', name: 'whoami', arguments: {} }]);
    expect(first.model).toBe('demo-script');
    expect((await provider.completeAction(request())).toolCalls).toEqual([]);
  });

  test('keeps one queue per pid in a { processes } script; pids without a key each get their own copy of "*"', async () => {
    const provider = new ScriptedProvider({
      processes: {
        pid_parent: [[{ tool: 'spawn_child' }], [{ tool: 'wait_child' }]],
        '*': [[{ tool: 'child_step' }], [{ tool: 'child_done' }]],
      },
    });
    expect(await names(provider, 'pid_child1')).toEqual(['child_step']);
    expect(await names(provider, 'pid_parent')).toEqual(['spawn_child']);
    expect(await names(provider, 'pid_child2')).toEqual(['child_step']);
    expect(await names(provider, 'pid_child1')).toEqual(['child_done']);
    expect(await names(provider, 'pid_parent')).toEqual(['wait_child']);
    expect(await names(provider)).toEqual(['child_step']);
    expect(await names(provider, 'pid_child2')).toEqual(['child_done']);
  });

  test('returns one process_exit { payload: { done: true } } call, every time, once a queue is used up', async () => {
    const provider = new ScriptedProvider([[{ tool: 'whoami' }]]);
    await provider.completeAction(request());
    const exhausted = await provider.completeAction(request());
    expect(exhausted.toolCalls).toEqual([{ id: 'mock_2', ...EXIT_DONE }]);
    expect(exhausted.raw).toEqual({ turn_index: null, exhausted: true });
    expect((await provider.completeAction(request())).toolCalls).toEqual([{ id: 'mock_3', ...EXIT_DONE }]);
  });

  test('exhausts per pid: a pid with no key and no "*" exits at once while another pid still has turns', async () => {
    const provider = new ScriptedProvider({ processes: { pid_a: [[{ tool: 'whoami' }]] } });
    expect((await provider.completeAction(request('pid_b'))).toolCalls).toEqual([{ id: 'mock_1', ...EXIT_DONE }]);
    expect(await names(provider, 'pid_a')).toEqual(['whoami']);
    expect((await provider.completeAction(request('pid_a'))).toolCalls).toEqual([{ id: 'mock_3', ...EXIT_DONE }]);
  });

  test('records each request (messages, tools, pid) as copies and counts calls', async () => {
    const provider = new ScriptedProvider([[{ tool: 'whoami' }]]);
    const req = request('pid_a', { parallelToolCalls: true });
    await provider.completeAction(req);
    await provider.completeAction(request('pid_b'));
    req.messages[1].content = 'changed after the call';
    expect(provider.calls).toBe(2);
    expect(provider.requests[0]).toEqual({
      messages: [
        { role: 'system', content: 'You are a libOS process.' },
        { role: 'user', content: 'Goal of pid_a' },
      ],
      tools: [{ name: 'process_exit', description: 'Ends the process.', parameters: { type: 'object' } }],
      parallelToolCalls: true,
      pid: 'pid_a',
    });
    expect(provider.requests[1].pid).toBe('pid_b');
  });

  test("hands out copies of scripted args, so one process mutating them does not change another process's turn", async () => {
    const provider = new ScriptedProvider({ processes: { '*': [[{ tool: 'write_object', args: { payload: { n: 1 } } }]] } });
    const a = await provider.completeAction(request('pid_a'));
    (a.toolCalls[0].arguments.payload as { n: number }).n = 99;
    const b = await provider.completeAction(request('pid_b'));
    expect(b.toolCalls[0].arguments).toEqual({ payload: { n: 1 } });
  });

  test("[K-43] returns tool names outside the request's tools as scripted, so the executor can reject and retry them", async () => {
    const provider = new ScriptedProvider([[{ tool: 'no_such_tool' }], [{ tool: 'no_such_tool' }]]);
    expect(await names(provider)).toEqual(['no_such_tool']);
    expect(await names(provider)).toEqual(['no_such_tool']);
  });

  test('rejects an already aborted request with cancelled and does not consume a turn', async () => {
    const provider = new ScriptedProvider([[{ tool: 'whoami' }]]);
    const controller = new AbortController();
    controller.abort();
    await expect(provider.completeAction(request(undefined, { signal: controller.signal }))).rejects.toMatchObject({ code: 'cancelled' });
    expect(await names(provider)).toEqual(['whoami']);
  });
});

describe('script validation', () => {
  test('names the path of a missing tool: script.turns[2][0].tool: required', () => {
    const err = catchError(() => new ScriptedProvider({ turns: [[{ tool: 'a' }], [], [{ args: {} } as never]] }));
    expect(err).toBeInstanceOf(LibosError);
    expect(err).toMatchObject({ code: 'invalid_arguments', message: 'script.turns[2][0].tool: required' });
  });

  test('names unknown keys, wrong types and empty names, and lists every issue in details', () => {
    const err = catchError(() => parseLlmScript([[{ tool: 'a', arg: 1 }], [{ tool: 'b', args: [1] }], [{ tool: '' }]])) as LibosError;
    expect(err.code).toBe('invalid_arguments');
    expect(err.message).toBe('script[0][0].arg: unknown key (and 2 more)');
    expect(err.details?.issues).toEqual([
      { path: 'script[0][0].arg', problem: 'unknown key' },
      { path: 'script[1][0].args', problem: 'must be record (got array)' },
      { path: 'script[2][0].tool', problem: 'must not be empty' },
    ]);
  });

  test('quotes pid keys that are not identifiers in the path', () => {
    const err = catchError(() => parseLlmScript({ processes: { 'pid a': [['x']] } }));
    expect(err).toMatchObject({ code: 'invalid_arguments', message: 'script.processes["pid a"][0][0]: must be object (got string)' });
  });

  test('rejects a script that is neither an array, { turns } nor { processes }', () => {
    expect(catchError(() => parseLlmScript('turns'))).toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringMatching(/^script: must be an array of turns/),
    });
    expect(catchError(() => parseLlmScript({}))).toMatchObject({ code: 'invalid_arguments', message: 'script.turns: required' });
  });
});

describe('script files', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'libos-llm-script-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('loads a YAML script with per-pid queues', async () => {
    const path = join(dir, 'demo.yaml');
    await writeFile(
      path,
      ['processes:', '  pid_a:', '    - - tool: list_objects', '        args: { limit: 3 }', '  "*":', '    - - tool: whoami', ''].join(
        '\n',
      ),
    );
    const provider = await ScriptedProvider.fromFile(path);
    expect((await provider.completeAction(request('pid_a'))).toolCalls).toEqual([
      { id: 'mock_1', name: 'list_objects', arguments: { limit: 3 } },
    ]);
    expect(await names(provider, 'pid_z')).toEqual(['whoami']);
  });

  test('loads a JSON script (.json) and a .yml script', async () => {
    const json = join(dir, 'flat.json');
    await writeFile(json, JSON.stringify([[{ tool: 'whoami' }], [{ tool: 'process_exit', args: { message: 'ok' } }]]));
    const provider = await ScriptedProvider.fromFile(json);
    expect(await names(provider)).toEqual(['whoami']);
    expect((await provider.completeAction(request())).toolCalls[0].arguments).toEqual({ message: 'ok' });
    const yml = join(dir, 'turns.yml');
    await writeFile(yml, 'turns:\n  - - tool: whoami\n');
    expect(await loadLlmScriptFile(yml)).toEqual({ turns: [[{ tool: 'whoami' }]] });
  });

  test('names the file and the bad field of an invalid script file', async () => {
    const path = join(dir, 'bad.yaml');
    await writeFile(path, 'turns:\n  - - tool: a\n  - - args: {}\n');
    await expect(loadLlmScriptFile(path)).rejects.toMatchObject({
      code: 'invalid_arguments',
      message: `script file ${path}: script.turns[1][0].tool: required`,
      details: { path },
    });
  });

  test('rejects unreadable files, syntax errors and unknown extensions with invalid_arguments', async () => {
    await expect(loadLlmScriptFile(join(dir, 'missing.json'))).rejects.toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringContaining('cannot read'),
    });
    const badJson = join(dir, 'bad.json');
    await writeFile(badJson, '[[{"tool": "a"}');
    await expect(loadLlmScriptFile(badJson)).rejects.toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringContaining('not valid JSON'),
    });
    const badYaml = join(dir, 'bad.yaml');
    await writeFile(badYaml, 'turns: [[{tool: a}\n');
    await expect(loadLlmScriptFile(badYaml)).rejects.toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringContaining('not valid YAML'),
    });
    const txt = join(dir, 'script.txt');
    await writeFile(txt, '[]');
    await expect(loadLlmScriptFile(txt)).rejects.toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringContaining('extension'),
    });
  });
});
