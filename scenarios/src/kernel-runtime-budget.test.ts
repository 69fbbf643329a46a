import { capabilities } from '@libos/capabilities';
import { openRuntime, type LlmProvider, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { afterEach, expect, it } from 'vitest';

let rt: Runtime;
afterEach(async () => rt.close());

it('each quantum charges its wall time to runtime_seconds; a process over its runtime budget is killed', async () => {
  let now = Date.parse('2026-11-30T12:00:00Z');
  const clock = { now: () => new Date(now) };
  // A slow model: every turn takes 4 seconds of (fake) wall time and then lists the process scope.
  const provider: LlmProvider = {
    name: 'slow',
    model: 'slow',
    async completeAction() {
      now += 4_000;
      return {
        content: null,
        toolCalls: [{ id: 'c', name: 'discover_skills', arguments: {} }],
        api: 'test',
        model: 'slow',
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      };
    },
  };
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session()], config: { clock } });
  const p = await rt.spawn({ goal: 'think slowly', budget: { runtime_seconds: 10 } });
  await rt.grant(p.pid, 'skill:*', ['read']);
  const report = await rt.run({ provider, maxQuanta: 5 });
  expect(report.results.map((r) => r.kind)).toEqual(['turn', 'turn', 'failed']);
  expect((await rt.budget(p.pid)).usage.runtime_seconds).toBe(12);
  expect(await rt.process(p.pid)).toMatchObject({ status: 'killed', outcome: { kind: 'killed', code: 'resource_limit_exceeded' } });
});
