import { capabilities } from '@libos/capabilities';
import { openRuntime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { sequentialIds } from '@libos/sdk';
import { session } from '@libos/session';
import { expect, it } from 'vitest';
import { compactionScene } from './compaction-scene.js';

it(`the demo's compaction scene: the scribe outgrows its window, two compressors compact its context, the generation moves, it \
finishes`, async () => {
  const rt = await openRuntime({
    path: ':memory:',
    plugins: [capabilities(), objectMemory(), session()],
    config: { ids: sequentialIds() },
  });
  try {
    const steps: string[] = [];
    const failures: string[] = [];
    const facts = await compactionScene(
      rt,
      (text) => steps.push(text),
      (cond, n, what) => void (cond ? undefined : failures.push(`${n}: ${what}`)),
    );
    expect(failures).toEqual([]);
    const order = [
      'host spawns the scribe',
      'scribe reads the clock → ok',
      'the next prompt will pass 80% of it',
      'the runtime compacts its context instead of asking the model → waits (waiting_child)',
      'compressor 1',
      "stage 1's summary rolls forward → waits for compressor 2",
      'compressor 2',
      'scribe resumes compact_process_context → compacted: version',
      'scribe get_current_time → ok',
      'scribe process_exit → exited',
      'context after: version',
      'the scribe went on working under its compacted context',
    ];
    let at = -1;
    for (const text of order) {
      const i = steps.findIndex((s, k) => k > at && s.includes(text));
      expect(i, `"${text}" after step ${at + 1} in:\n${steps.join('\n')}`).toBeGreaterThan(at);
      at = i;
    }
    expect(facts.compressors).toHaveLength(2);
    expect(facts.new_version).toBe(Number(facts.old_version) + 1);
    expect(facts.generation.after).not.toBe(facts.generation.before);
    expect(steps.find((s) => s.startsWith('context after:'))).toBe(
      `context after: version ${facts.old_version} → ${facts.new_version}, generation ${facts.generation.before} ` +
        `→ ${facts.generation.after}`,
    );
  } finally {
    await rt.close();
  }
});
