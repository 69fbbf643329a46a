import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capabilities } from '@libos/capabilities';
import { type LlmRequest, openRuntime, type Runtime, ScriptedProvider } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { sequentialIds } from '@libos/sdk';
import { session } from '@libos/session';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { memoHarness } from './support/memo-harness.js';

// K-9.31 on real SQLite file stores: one scripted story (processes taking turns, a third spawned midway, past the 10 calls and 20 events a
// prompt shows, with failed calls) runs twice on a fixed clock and sequential ids: as it is, and with a write of
// `events` and `audit_records` that changes no row before every turn, which makes every held history stale, so each
// turn reads its histories from the store. The prompts must be the same; only the first reads them.

const h = memoHarness('libos-turn-history-');
const HISTORY_READS = /^select "(seq", "type", "data" from "events"|target", "decision", "details", "call_id" from "audit_records")/;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Turns of a process: `get_current_time`, every fourth a read of an Object that is not there (it fails). */
const turns = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    i % 4 === 3 ? [{ tool: 'read_memory_object', args: { name: `missing_${i}` } }] : [{ tool: 'get_current_time', args: {} }],
  );
const EXIT = [{ tool: 'process_exit', args: { message: 'done' } }];

/** Runs the story on a fresh store; `stale` writes both tables (no row changed) before each turn. Returns the prompts. */
async function story(stale: boolean): Promise<{ prompts: string[]; readonly reads: number }> {
  const reads = h.countStatements(HISTORY_READS);
  const dir = mkdtempSync(join(tmpdir(), 'libos-turn-history-'));
  dirs.push(dir);
  const rt: Runtime = await openRuntime({
    path: join(dir, 'store.db'),
    plugins: [capabilities(), objectMemory(), session()],
    config: { clock: { now: () => new Date('2031-01-01T00:00:00.000Z') }, ids: sequentialIds() },
  });
  try {
    const [a, b] = [
      await rt.spawn({ goal: 'a', budget: { tool_calls: null } }),
      await rt.spawn({ goal: 'b', budget: { tool_calls: null } }),
    ];
    for (const p of [a, b]) {
      await rt.grant(p.pid, 'clock:now', ['read']);
      await rt.activateSkill(p.pid, 'agent-libos-object-memory');
    }
    const scripted = new ScriptedProvider({
      processes: { [a.pid]: [...turns(14), EXIT], [b.pid]: [...turns(9), EXIT], '*': [...turns(2), EXIT] },
    });
    const prompts: string[] = [];
    const provider = {
      name: scripted.name,
      model: scripted.model,
      async completeAction(req: LlmRequest) {
        prompts.push(req.messages.map((m) => m.content).join('\n'));
        // A third process spawned mid-run: its rows land while the others' histories are held and its own is not.
        if (prompts.length === 5) await rt.grant((await rt.spawn({ goal: 'c', budget: { tool_calls: null } })).pid, 'clock:now', ['read']);
        if (stale)
          await rt.transaction(async (scope) => {
            await sql`update events set type = type where 0 = 1`.execute(scope.store);
            await sql`update audit_records set action = action where 0 = 1`.execute(scope.store);
          });
        return scripted.completeAction(req);
      },
    };
    const r = await rt.run({ provider });
    expect(r.results.map((q) => q.executed.at(-1))).toContain('process_exit');
    return { prompts, reads: reads.get('all') ?? 0 };
  } finally {
    await rt.close();
  }
}

/** `prompts` with every id replaced by its kind and the order of its first appearance in them. */
function numberedIds(prompts: readonly string[]): string[] {
  const seen = new Map<string, string>();
  return prompts.map((p) =>
    p.replace(/\b([a-z]+)_[0-9a-f]{16}\b/g, (id, kind: string) => {
      if (!seen.has(id)) seen.set(id, `${kind}#${seen.size}`);
      return seen.get(id)!;
    }),
  );
}

describe('turn histories written through (K-9.31)', () => {
  it('[K-9.31] every turn shows the recent events and tool calls a read of the store shows, read only when stale', async () => {
    const held = await story(false);
    const read = await story(true);
    // Plugins draw some ids from the process-wide source (random): each is named by its first appearance.
    for (const run of [held, read]) run.prompts = numberedIds(run.prompts);
    expect(held.prompts).toHaveLength(28);
    expect(held.prompts).toEqual(read.prompts);
    const last = held.prompts.at(-2)!;
    expect(last).toContain('Recent tool calls');
    expect(last).toContain(': object_not_found (name: '); // a failed call, with its message
    expect(last.match(/^- call#/gm)).toHaveLength(10); // the list rolled past its 10
    expect(read.reads).toBe(2 * 28); // both histories, every turn
    // Read: at each process's first turn, and at the turns after a failed call (its savepoint rolled back, which makes
    // everything the memo held stale) until each process has read again: about a third of the turns in this story.
    expect(held.reads).toBeLessThan(read.reads / 2);
  });
});
