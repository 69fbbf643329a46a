import {
  definePlugin,
  defineTool,
  LibosError,
  sequentialIds,
  skillFromText,
  z,
  type RunnerObserver,
  type RunnerService,
  type ServiceScope,
} from '@libos/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import type { LlmProvider } from '../llm/provider.js';
import { notesPluginWithImage } from '../internal/testing/notes-plugin.js';
import { openRuntime, type Runtime } from '../runtime.js';

// Kernel support for ObjectTasks, without the tasks plugin: a runner is a child whose table is one tool, born with
// its saved call, resumed by the scheduler without a model call; its observer hears start, settlement and end in
// the same transactions. Task waits park a caller until the plugin wakes it, or until their deadline.

type Heard = [string, ...unknown[]];

/** An observer plugin that records what it hears and ends its runner once the call settles. */
function observerPlugin(heard: Heard[]) {
  const WAIT_SKILL_MD = [
    '---',
    'name: test-task-wait',
    'description: Park on a task id (kernel test fixture).',
    'allowed-tools: park_on_task',
    '---',
    'Park.',
    '',
  ].join('\n');
  const park = defineTool({
    name: 'park_on_task',
    description: 'Park until a task changes or the deadline passes.',
    input: z.object({ task_id: z.string(), deadline: z.string().optional() }),
    run({ task_id, deadline }, ctx) {
      if (ctx.resumed) return { woke: true };
      return ctx.wait({ kind: 'task', task_id, ...(deadline ? { deadline } : {}) });
    },
  });
  return definePlugin({
    name: 'test-observer',
    version: '0.0.0',
    skills: [skillFromText(WAIT_SKILL_MD, 'test-task-wait')],
    tools: [park],
    images: [
      {
        id: 'park-agent:v0',
        description: 'Parks on tasks.',
        systemPrompt: 'Test.',
        promptMode: 'image_only',
        defaultSkills: ['test-task-wait'],
        defaultTools: ['park_on_task'],
      },
    ],
    services: {
      test_observer: (scope: ServiceScope): RunnerObserver => ({
        // What the observer hears counts only if its transaction commits.
        async started(r) {
          scope.afterCommit(() => heard.push(['started', r.operationId]));
        },
        async settled(r, outcome) {
          scope.afterCommit(() =>
            heard.push([
              'settled',
              outcome.kind,
              outcome.kind === 'succeeded' ? outcome.payload : outcome.kind === 'failed' ? outcome.error.code : outcome.wait,
            ]),
          );
          const runners = scope.service<RunnerService>('runners');
          if (outcome.kind === 'succeeded') await runners.end(r.pid, { kind: 'exited', resultOid: null });
          if (outcome.kind === 'failed')
            await runners.end(r.pid, { kind: 'failed', code: outcome.error.code, message: outcome.error.message });
        },
        async ended(r, status) {
          scope.afterCommit(() => heard.push(['ended', r.operationId, status]));
        },
      }),
    },
  });
}

/** A provider that must never be asked. */
const noModel: LlmProvider = {
  name: 'none',
  model: 'none',
  completeAction: async () => {
    throw new LibosError('internal_error', 'a runner asked a model');
  },
};

const rts: Runtime[] = [];
afterEach(async () => {
  for (const rt of rts.splice(0)) await rt.close();
});

async function setup() {
  const heard: Heard[] = [];
  const rt = await openRuntime({
    path: ':memory:',
    plugins: [notesPluginWithImage(), observerPlugin(heard)],
    config: { ids: sequentialIds() },
  });
  rts.push(rt);
  const creator = await rt.spawn({ image: 'notes-agent:v0', goal: 'creator' });
  await rt.activateSkill(creator.pid, 'test-notes');
  // The creator is driven by the test, never by the scheduler.
  await rt.signal(creator.pid, 'pause');
  const spawn = (tool: string, args: Record<string, unknown>, operationId = 'op_1') =>
    rt.transaction((scope) =>
      scope.service<RunnerService>('runners').spawn({
        creatorPid: creator.pid,
        operationId,
        observer: 'test_observer',
        tool,
        args,
        goal: `run ${tool}`,
        grants: [],
        inherit: [],
      }),
    );
  return { rt, heard, creator: creator.pid, spawn };
}

describe('runners', () => {
  it('a runner holds one tool and its saved call; the scheduler runs it without a model and the observer hears it all', async () => {
    const { rt, heard, creator, spawn } = await setup();
    const { pid, callId } = await spawn('note_count', {});
    const p = await rt.process(pid);
    expect(p).toMatchObject({ parentPid: creator, status: 'runnable', toolTable: ['note_count'], visibleTools: ['note_count'] });
    const state = await rt.transaction((scope) => scope.service<RunnerService>('runners').get(pid));
    expect(state).toMatchObject({ operationId: 'op_1', tool: 'note_count', savedCallWait: { kind: 'tool', operation_id: 'op_1' } });
    expect(await rt.transaction((scope) => scope.service<RunnerService>('runners').get(creator))).toBeNull();
    expect((await rt.budget(pid)).usage.tool_calls).toBe(1);
    const report = await rt.run({ provider: noModel, maxQuanta: 1 });
    expect(report.results[0]).toMatchObject({ pid, kind: 'resumed', stopReason: 'process_terminal' });
    expect(heard).toEqual([
      ['started', 'op_1'],
      ['settled', 'succeeded', { count: 0 }],
      ['ended', 'op_1', 'exited'],
    ]);
    expect((await rt.audit({ action: 'tool.call' })).filter((a) => a.callId === callId).map((a) => a.decision)).toEqual(['ok']);
    expect((await rt.events({ type: 'tool_called' })).map((e) => e.data.pid)).toContain(pid);
    expect(await rt.llmCalls({ pid })).toEqual([]);
  });

  it('a failing call settles as failed in the failure record; a kill is heard as an end', async () => {
    const { rt, heard, spawn } = await setup();
    const { pid } = await spawn('note_write', { key: 'k', text: 't' });
    await rt.run({ provider: noModel, maxQuanta: 1 });
    expect(heard).toEqual([
      ['settled', 'failed', 'permission_denied'],
      ['ended', 'op_1', 'failed'],
    ]);
    expect((await rt.process(pid)).status).toBe('failed');
    heard.length = 0;
    const second = await spawn('note_count', {}, 'op_2');
    await rt.signal(second.pid, 'terminate');
    expect(heard).toEqual([['ended', 'op_2', 'killed']]);
  });

  it('refuses an unknown or invisible tool and bad arguments before any runner exists', async () => {
    const { rt, spawn } = await setup();
    const before = (await rt.processes()).length;
    await expect(spawn('no_such_tool', {})).rejects.toMatchObject({ code: 'tool_not_found' });
    await expect(spawn('park_on_task', { task_id: 't' })).rejects.toMatchObject({ code: 'tool_not_in_process_table' });
    await expect(spawn('note_write', { key: 7 })).rejects.toMatchObject({
      code: 'invalid_arguments',
      details: { fields: ['args.key', 'args.text'] },
    });
    expect((await rt.processes()).length).toBe(before);
  });

  it('a runner without a saved call fails instead of asking a model', async () => {
    const { rt, spawn } = await setup();
    const { pid } = await spawn('note_count', {});
    await rt.transaction(async (scope) => void (await scope.store.deleteFrom('pending_actions').where('pid', '=', pid).execute()));
    await rt.run({ provider: noModel, maxQuanta: 1 });
    expect(await rt.process(pid)).toMatchObject({ status: 'failed', outcome: { code: 'invalid_state' } });
    expect(await rt.llmCalls({ pid })).toEqual([]);
  });

  it('a creator may exit with a live runner (not with an ordinary live child); the runner still runs', async () => {
    const { rt, heard, creator, spawn } = await setup();
    const { pid } = await spawn('note_count', {});
    await rt.transaction((scope) =>
      (scope.service('processes') as { exit: (p: string, o: { resultOid: null }) => Promise<unknown> }).exit(creator, { resultOid: null }),
    );
    expect((await rt.process(creator)).status).toBe('exited');
    await rt.run({ provider: noModel, maxQuanta: 1 });
    expect((await rt.process(pid)).status).toBe('exited');
    expect(heard.map((x) => x[0])).toEqual(['started', 'settled', 'ended']);

    const other = await rt.spawn({ image: 'notes-agent:v0', goal: 'other' });
    await rt.spawn({ image: 'notes-agent:v0', goal: 'child', parentPid: other.pid });
    await expect(
      rt.transaction((scope) =>
        (scope.service('processes') as { exit: (p: string, o: { resultOid: null }) => Promise<unknown> }).exit(other.pid, {
          resultOid: null,
        }),
      ),
    ).rejects.toMatchObject({ code: 'invalid_state' });
  });

  it('a task wait is woken by wakeTaskWaiters for its own task only, or by an idle scheduler at its deadline', async () => {
    const { rt } = await setup();
    const a = await rt.spawn({ image: 'park-agent:v0', goal: 'a' });
    const b = await rt.spawn({ image: 'park-agent:v0', goal: 'b' });
    expect(await rt.call(a.pid, 'park_on_task', { task_id: 't1' })).toMatchObject({ ok: true, wait: { kind: 'task', task_id: 't1' } });
    const past = new Date(Date.now() - 1000).toISOString();
    expect(await rt.call(b.pid, 'park_on_task', { task_id: 't2', deadline: past })).toMatchObject({
      ok: true,
      wait: { kind: 'task', task_id: 't2', deadline: past },
    });
    expect(await rt.transaction((scope) => scope.service<RunnerService>('runners').wakeTaskWaiters('t1'))).toEqual([a.pid]);
    expect((await rt.process(a.pid)).status).toBe('runnable');
    expect((await rt.process(b.pid)).status).toBe('waiting_event');
    await rt.signal(a.pid, 'terminate');
    // Nothing is runnable: the scheduler wakes b at its (past) deadline and resumes its saved call.
    const report = await rt.run({ provider: noModel, maxQuanta: 1 });
    expect(report.results[0]).toMatchObject({ pid: b.pid, kind: 'resumed', results: [{ ok: true, payload: { woke: true } }] });
    // Without deadline waits an idle scheduler just stops.
    await rt.signal(b.pid, 'terminate');
    expect(await rt.run({ provider: noModel })).toMatchObject({ quanta: 0, idle: true });
  });
});
