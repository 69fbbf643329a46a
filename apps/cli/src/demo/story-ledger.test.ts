import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sequentialIds } from '@libos/sdk';
import { expect, it } from 'vitest';
import { openStandardRuntime } from '../compose.js';
import { tellStory } from '../demo.js';

/**
 * What the demo's story (parent, worker, human: `tellStory` in demo.ts, without the checkpoint and compaction scenes)
 * writes to a fresh store: audit records counted by (action, decision), events counted by type, model calls, and
 * each process's final status and outcome kind.
 *
 * Where it came from: issue 9's acceptance ("the audit, events and decisions of a scripted story are the same before
 * and after" the call-path rework). The story was run on commit 031de39 (before the rework) and on 7c63acd; every
 * row of 031de39 is here with the same count and in the same order, and 7c63acd adds three kinds, none from the
 * call path: `data_flow.decision allow` +2 (fceff81, issue 8: every sink passes one clearance, so the worker's
 * ask_human clears `human:owner:question` and its exit result clears `process:<parent>`), and
 * `object.release_ended released` +1 with 12 `object_released` events (8f869a4, issue 14: the release of an ended
 * root's memory, S-E8/S-E11/OT-47).
 *
 * How to update it: only deliberately. A change to the call path, the audit or the events that moves a count here
 * must say why in its commit; then copy the "received" side of the failing diff below and name the change in this
 * comment.
 */
const EXPECTED_AUDIT: Record<string, number> = {
  'capability.authorize allow': 5,
  'capability.derive_authority derived': 1,
  'capability.issue issued': 22,
  'data_flow.decision allow': 16,
  'data_flow.taint raised': 2,
  'human.answer approved': 1,
  'llm.action_batch completed': 5,
  'llm.action_batch process_terminal': 2,
  'llm.action_batch tool_failed': 1,
  'llm.action_batch waiting_child': 1,
  'llm.action_batch waiting_human': 1,
  'llm.action_batch waiting_message': 2,
  'message.post normal': 2,
  'object.create_for_process allow': 14,
  'object.release_ended released': 1,
  'process.exit exited': 2,
  'process.spawn ok': 2,
  'resource.charge charged': 51,
  'resource.close_account closed': 2,
  'resource.open_account opened': 1,
  'resource.reserve_child_budget reserved': 1,
  'skill.activate -': 3,
  'tool.call namespace_denied': 1,
  'tool.call ok': 12,
  'tool.call waiting': 4,
};

const EXPECTED_EVENTS: Record<string, number> = {
  'capability.granted': 24,
  human_request_answered: 1,
  human_request_created: 1,
  llm_call: 12,
  message_posted: 2,
  object_created: 14,
  object_namespace_created: 4,
  object_released: 12,
  process_created: 2,
  process_exited: 2,
  process_woken: 4,
  'resource.charged': 52,
  skill_loaded: 3,
  tool_called: 12,
  tool_completed: 12,
  tool_failed: 1,
  tool_resumed: 4,
  tool_waiting: 4,
};

const EXPECTED_PROCESSES = { parent: 'exited (exited)', worker: 'exited (exited)' };
const EXPECTED_LLM_CALLS = 12;

const countBy = <T>(rows: readonly T[], key: (r: T) => string): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const r of rows) out[key(r)] = (out[key(r)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
};

it(`[K-9.6] the demo story's audit (action, decision) and event-type counts, model calls and final statuses are the \
pinned ones`, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'libos-story-ledger-'));
  const rt = await openStandardRuntime(join(dir, 'story.db'), { ids: sequentialIds() });
  try {
    const told = await tellStory(
      rt,
      () => 0,
      (cond, n, what) => {
        if (!cond) throw new Error(`story step ${n}: ${what}`);
      },
    );
    const audit = await rt.audit({ limit: 10_000 });
    const events = await rt.events({ limit: 10_000 });
    expect(audit.length).toBeLessThan(10_000);
    expect(events.length).toBeLessThan(10_000);
    expect(countBy(audit, (a) => `${a.action} ${a.decision ?? '-'}`)).toEqual(EXPECTED_AUDIT);
    expect(countBy(events, (e) => e.type)).toEqual(EXPECTED_EVENTS);
    expect((await rt.llmCalls({ limit: 10_000 })).length).toBe(EXPECTED_LLM_CALLS);
    const final = async (pid: string) => {
      const p = await rt.process(pid);
      return `${p.status} (${String(p.outcome?.kind ?? '-')})`;
    };
    expect({ parent: await final(told.parent), worker: await final(told.worker) }).toEqual(EXPECTED_PROCESSES);
    expect((await rt.processes()).length).toBe(2);
  } finally {
    await rt.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
