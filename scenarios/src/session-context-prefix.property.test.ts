import fc from 'fast-check';
import { ScriptedProvider } from '@libos/kernel';
import { expect, it } from 'vitest';
import { contextOf, contextText, CTX_AGENT, openContextRuntime } from './support/context-harness.js';

/** One quantum of a generated run: the model's call, and what the host does before the next prompt. */
const step = fc.record({
  call: fc.oneof(
    fc.record({ tool: fc.constant('note_touch'), args: fc.record({ label: fc.string({ minLength: 1, maxLength: 12 }), size: fc.integer({ min: 0, max: 400 }) }) }),
    fc.constant({ tool: 'get_current_time', args: {} }),
    fc.constant({ tool: 'get_current_time', args: { timezone: 'Mars/Olympus' } }),
  ),
  host: fc.constantFrom('nothing', 'grant', 'message'),
});

it('[S-X2] property: any run of quanta without a compaction renders byte-prefix-stable contexts, under one generation', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 7 }), async (steps) => {
      const rt = await openContextRuntime();
      try {
        const p = await rt.spawn({ goal: 'wander', image: CTX_AGENT });
        const provider = new ScriptedProvider(steps.map((s) => [s.call]));
        const renders: string[] = [];
        const generations = new Set<string | null>();
        for (const [i, s] of steps.entries()) {
          await rt.run({ provider, maxQuanta: 1 });
          renders.push(contextText(provider.requests[i]!)!);
          generations.add((await contextOf(rt, p.pid)).generation);
          if (s.host === 'grant') await rt.grant(p.pid, 'clock:now', ['read'], { uses: 1 });
          if (s.host === 'message') await rt.sendMessage(p.pid, { note: i });
        }
        for (let i = 1; i < renders.length; i++) expect(renders[i]!.startsWith(renders[i - 1]!)).toBe(true);
        expect(generations.size).toBe(1);
      } finally {
        await rt.close();
      }
    }),
    { numRuns: 12 },
  );
});
