import fc from 'fast-check';
import { ScriptedProvider } from '@libos/kernel';
import { expect, it } from 'vitest';
import { CompressorProvider, contextOf, contextText, CTX_AGENT, openContextRuntime } from './support/context-harness.js';

/** One quantum of a generated run: the model's call, and what the host does before the next prompt. */
const step = fc.record({
  call: fc.oneof(
    fc.record({
      tool: fc.constant('note_touch'),
      args: fc.record({ label: fc.string({ minLength: 1, maxLength: 12 }), size: fc.integer({ min: 0, max: 400 }) }),
    }),
    fc.constant({ tool: 'get_current_time', args: {} }),
    fc.constant({ tool: 'get_current_time', args: { timezone: 'Mars/Olympus' } }),
  ),
  host: fc.constantFrom('nothing', 'grant', 'message'),
});

it(`[S-X2] property: any run of quanta without a compaction renders byte-prefix-stable contexts under one generation; a compaction moves \
it`, async () => {
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
        // A compaction rewrites the entries: the generation moves, and the next render no longer extends the last.
        await rt.grant(p.pid, 'process:spawn', ['write']);
        await rt.grant(p.pid, 'image:context-compressor:v0', ['read']);
        expect(await rt.call(p.pid, 'compact_process_context', { force: true, max_chunks: 1 })).toMatchObject({
          ok: true,
          wait: { kind: 'child' },
        });
        await rt.run({ provider: new CompressorProvider(rt, provider), maxQuanta: 2 });
        const after = await contextOf(rt, p.pid);
        expect(after.generation).not.toBe([...generations][0]);
        expect(after.payload!.entries[0]!.kind).toBe('context_compacted');
        const next = new ScriptedProvider([[{ tool: 'note_touch', args: { label: 'next' } }]]);
        await rt.run({ provider: next, maxQuanta: 1 });
        expect(contextText(next.requests[0]!)!.startsWith(renders.at(-1)!)).toBe(false);
      } finally {
        await rt.close();
      }
    }),
    { numRuns: 10 },
  );
});
