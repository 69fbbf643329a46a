import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ScriptedProvider,
  type LlmToolCall,
  type ProcessInfo,
  type QuantumResult,
  type Runtime,
  type RuntimeEvent,
  type ToolCallResult,
} from '@libos/kernel';
import { sequentialIds } from '@libos/sdk';
import { openStandardRuntime } from './compose.js';
import { BoundScriptedProvider } from './demo/bound-provider.js';
import { checkpointScene } from './demo/checkpoint-scene.js';
import { compactionScene } from './demo/compaction-scene.js';
import { describeCall, describeResult } from './demo/narrate.js';
import { PARENT_GRANTS, STORY, storyScript, WORKER_INHERITS } from './demo/story.js';
import { EXIT, UsageError } from './output.js';

export interface DemoOptions {
  /** Store file; default a fresh temp file, so every run starts clean. A given file must not exist yet. */
  readonly db?: string | undefined;
  readonly json: boolean;
}

interface Step {
  readonly n: number;
  readonly text: string;
  readonly details: readonly string[];
}

/** A step that did not behave as the story expects: the demo exits 1 naming it. */
class StepFailure extends Error {
  constructor(
    readonly step: number,
    what: string,
  ) {
    super(`demo: step ${step} did not behave as expected: ${what}`);
  }
}

/**
 * The scripted demo (issue 5's story) on a fresh SQLite store, deterministic (sequential ids, scripted model): a
 * parent spawns a worker; the parent is refused a visible tool it holds no right for; the worker asks a human a
 * question, which the demo answers; they exchange messages both ways; both exit; then the counts of model calls,
 * audit records and events; then a checkpoint scene (capture, a risky change, restore: the change gone, the audit
 * intact); then a compaction scene (a process outgrows its model window, two compressor children compact its LLM
 * context, it goes on working). Prints a numbered trace (or JSON with --json). Every step checks its outcome: exit 0
 * only when all behaved as expected, else exit 1 naming the step.
 */
export async function runDemo(opts: DemoOptions): Promise<number> {
  if (opts.db !== undefined && existsSync(opts.db) && statSync(opts.db).size > 0) {
    throw new UsageError(`demo: --db ${opts.db} already exists; the demo writes a fresh store (remove it or name a new file)`);
  }
  const db = opts.db ?? join(mkdtempSync(join(tmpdir(), 'libos-demo-')), 'demo.db');
  const steps: Step[] = [];
  const say = (line: string) => {
    if (!opts.json) process.stdout.write(`${line}\n`);
  };
  const step = (text: string, details: readonly string[] = []): number => {
    const n = steps.length + 1;
    steps.push({ n, text, details });
    say(`${String(n).padStart(2)}. ${text}`);
    for (const d of details) say(`      ${d}`);
    return n;
  };
  const expect = (cond: boolean, n: number, what: string) => {
    if (!cond) throw new StepFailure(n, what);
  };

  const rt: Runtime = await openStandardRuntime(db, { ids: sequentialIds() });
  try {
    say(`libOS demo: a parent, a worker and a human (store: ${db})`);
    say('Scripted model and sequential ids: the same story every time. No network, no API key.\n');
    const story = await tellStory(rt, step, expect);
    say('\nThen a checkpoint: capture, a risky change, restore.');
    const checkpoint = await checkpointScene(rt, step, expect);
    say('\nThen a long shift: a process outgrows its model window and its context is compacted.');
    const compaction = await compactionScene(rt, step, expect);
    if (opts.json) process.stdout.write(`${JSON.stringify({ db, ok: true, steps, ...story, checkpoint, compaction }, null, 2)}\n`);
    say('\nVisibility is never authority: the parent saw create_memory_namespace and was refused at the effect;');
    say('the worker could ask the human only because it inherited write on human:owner, exactly.');
    return EXIT.ok;
  } catch (err) {
    if (!(err instanceof StepFailure)) throw err;
    if (opts.json)
      process.stderr.write(
        `${JSON.stringify({ schema_version: 1, error: { code: 'demo_step_failed', message: err.message, step: err.step } })}\n`,
      );
    else process.stderr.write(`libos: ${err.message}\n`);
    return EXIT.toolError;
  } finally {
    await rt.close();
  }
}

type StepFn = (text: string, details?: readonly string[]) => number;
type ExpectFn = (cond: boolean, n: number, what: string) => void;

/**
 * The story alone (no checkpoint or compaction scene) on `rt`: exported so that the story-ledger test pins what it
 * writes to the store (K-9.6).
 */
export async function tellStory(rt: Runtime, step: StepFn, expect: ExpectFn) {
  // 1-2: the host spawns the parent and grants it what it needs.
  const parent = await rt.spawn({ goal: STORY.parentGoal });
  let n = step(`host spawns the parent ${parent.pid} from ${parent.imageId}`, [`goal: ${parent.goal}`]);
  expect(parent.status === 'runnable', n, `the parent is ${parent.status}, expected runnable`);
  for (const gr of PARENT_GRANTS) await rt.grant(parent.pid, gr.resource, gr.rights, { delegable: gr.delegable });
  const granted = PARENT_GRANTS.map((gr) => `${gr.rights.join(',')} on ${gr.resource}${gr.delegable ? ' (delegable)' : ''}`);
  n = step(`host grants the parent: ${granted.join('; ')}`, ['a grant is authority; a Skill only shows tools']);
  const held = await rt.capabilities(parent.pid);
  const missing = PARENT_GRANTS.filter(
    (gr) => !held.some((c) => c.resource === gr.resource && gr.rights.every((r) => c.rights.includes(r)) && c.delegable === gr.delegable),
  );
  expect(missing.length === 0, n, `the parent should hold every grant given (missing: ${missing.map((gr) => gr.resource).join(', ')})`);

  const provider = new BoundScriptedProvider(new ScriptedProvider(storyScript(parent.pid)));
  const roles = new Map<string, string>([[parent.pid, 'parent']]);
  const role = (pid: unknown) => roles.get(String(pid)) ?? String(pid);
  const blocked = new Map<string, Pick<LlmToolCall, 'name' | 'arguments'>>();
  const woken: RuntimeEvent[] = [];
  rt.watch({
    event: (e) => {
      if (e.type === 'process_woken') woken.push(e);
    },
  });
  /** Facts the checks need: the step that showed each thing. */
  const seen: { quantum: QuantumResult; step: number; call: Pick<LlmToolCall, 'name' | 'arguments'>; result: ToolCallResult }[] = [];

  const narrate = (q: QuantumResult) => {
    const turn = provider.lastTurn.get(q.pid) ?? [];
    const parts = q.executed.map((tool, i) => {
      const call =
        q.kind === 'resumed' ? (blocked.get(q.pid) ?? { name: tool, arguments: {} }) : (turn[i] ?? { name: tool, arguments: {} });
      const r = q.results[i]!;
      if (r.ok && tool === 'spawn_child_process') {
        const child = String((r.payload as { pid: string }).pid);
        provider.vars.set('child', child);
        roles.set(child, 'worker');
      }
      if (r.ok && tool === 'ask_human' && !r.wait) provider.vars.set('answer', String((r.payload as { answer: string }).answer));
      if (r.ok && r.wait) blocked.set(q.pid, call);
      const what = q.kind === 'resumed' ? `resumes ${tool} without a model call` : describeCall(call, role);
      return { call, r, text: `${what} → ${describeResult(tool, r, role)}` };
    });
    const details: string[] = [];
    for (const { call, r } of parts) {
      if (!r.ok) details.push(`${r.error.category}: ${r.error.message}`);
      if (!r.ok && call.name === 'create_memory_namespace')
        details.push('the tool is visible to the parent, yet it holds no write there: visibility is never authority');
      if (r.ok && call.name === 'spawn_child_process')
        details.push(`inherits exactly: ${WORKER_INHERITS.map((s) => `${s.rights.join(',')} on ${s.resource}`).join('; ')}`);
    }
    if (q.skipped.length) details.push(`skipped: ${q.skipped.join(', ')}`);
    for (const e of woken.splice(0)) details.push(`the ${role(e.data.pid)} woke: ${String(e.data.reason)}`);
    const at = step(`${role(q.pid)} ${parts.map((p) => p.text).join('; ') || `${q.kind} (${q.stopReason ?? '-'})`}`, details);
    for (const p of parts) seen.push({ quantum: q, step: at, call: p.call, result: p.r });
  };
  const find = (who: string, tool: string, pred: (s: (typeof seen)[number]) => boolean = () => true) =>
    seen.find((s) => role(s.quantum.pid) === who && s.call.name === tool && pred(s));

  // The first run: until both wait (the parent for the worker's message, the worker for the human).
  const run1 = await rt.run({ provider, maxQuanta: 50, onQuantum: narrate });
  const refused = find('parent', 'create_memory_namespace');
  expect(
    refused !== undefined && !refused.result.ok && refused.result.error.category === 'permission_denied',
    refused?.step ?? steps(seen),
    'the parent’s create_memory_namespace should be refused with permission_denied',
  );
  const spawned = find('parent', 'spawn_child_process');
  expect(spawned?.result.ok === true, spawned?.step ?? steps(seen), 'the parent should spawn the worker');
  const childPid = provider.vars.get('child')!;
  const afterRun1 = await statuses(rt);
  n = step(`scheduler idle after ${run1.quanta} quanta: ${describeStatuses(afterRun1, role)}`);
  expect(run1.idle, n, 'the first run should end idle');
  expect(
    afterRun1.get(parent.pid)?.waitState?.kind === 'message',
    n,
    `the parent should wait for a message (it is ${afterRun1.get(parent.pid)?.status})`,
  );
  expect(
    afterRun1.get(childPid)?.status === 'waiting_human',
    n,
    `the worker should wait for the human (it is ${afterRun1.get(childPid)?.status})`,
  );

  // The human answers the worker's question.
  const pending = await rt.humanRequests({ status: 'pending' });
  const queued = pending.map((h) => `${h.id} (${h.kind} from the ${role(h.pid)}: ${JSON.stringify(h.prompt)})`).join(', ');
  n = step(`the human queue holds ${pending.length} request: ${queued}`);
  expect(
    pending.length === 1 && pending[0]!.kind === 'question' && pending[0]!.pid === childPid,
    n,
    'exactly one pending question, from the worker',
  );
  const answered = await rt.answerHuman(pending[0]!.id, { approved: true, answer: STORY.answer, responder: 'human:owner' });
  const worker = await rt.process(childPid);
  n = step(
    `the human answers ${JSON.stringify(STORY.answer)} (rt.answerHuman) → ${answered.status}; the worker is ${worker.status}`,
    woken.splice(0).map((e) => `the ${role(e.data.pid)} woke: ${String(e.data.reason)}`),
  );
  expect(
    answered.status === 'approved' && worker.status === 'runnable',
    n,
    `the answer should wake the worker (request ${answered.status}, worker ${worker.status})`,
  );

  // The second run: the exchange and both exits.
  const run2 = await rt.run({ provider, maxQuanta: 50, onQuantum: narrate });
  const toParent = find('parent', 'receive_process_messages', (s) => s.result.ok && !s.result.wait);
  const payloads = (s: typeof toParent) =>
    ((s?.result.ok ? (s.result.payload as { messages?: { payload: unknown }[] }).messages : undefined) ?? []).map((m) => m.payload);
  expect(
    JSON.stringify(payloads(toParent)) === JSON.stringify([{ region: STORY.answer, sites: 3 }]),
    toParent?.step ?? steps(seen),
    'the parent should receive the worker’s report naming the human’s answer',
  );
  const toWorker = find('worker', 'receive_process_messages', (s) => s.result.ok && !s.result.wait);
  expect(
    JSON.stringify(payloads(toWorker)) === JSON.stringify([STORY.reply]),
    toWorker?.step ?? steps(seen),
    'the worker should receive the parent’s reply',
  );
  const waited = find('parent', 'wait_child_process', (s) => s.result.ok && !s.result.wait);
  expect(
    waited?.result.ok === true &&
      (waited.result.payload as { status: string; ready: boolean }).status === 'exited' &&
      (waited.result.payload as { ready: boolean }).ready,
    waited?.step ?? steps(seen),
    'the parent’s wait should end with the worker exited',
  );
  const afterRun2 = await statuses(rt);
  n = step(`scheduler idle after ${run2.quanta} quanta: ${describeStatuses(afterRun2, role)}`);
  expect(
    run2.idle && afterRun2.get(parent.pid)?.status === 'exited' && afterRun2.get(childPid)?.status === 'exited',
    n,
    `both should exit (${describeStatuses(afterRun2, role)})`,
  );

  // The record: every model call, resumed waits that made none, the audit trail and the events.
  const quanta = [...run1.results, ...run2.results];
  const turns = quanta.filter((q) => q.kind === 'turn').length;
  const resumed = quanta.filter((q) => q.kind === 'resumed').length;
  const calls = await rt.llmCalls({ limit: 10_000 });
  const audit = await rt.audit({ limit: 10_000 });
  const events = await rt.events({ limit: 10_000 });
  const byAction = new Map<string, number>();
  for (const a of audit) byAction.set(a.action, (byAction.get(a.action) ?? 0) + 1);
  const perPid = (pid: string) => calls.filter((c) => c.pid === pid).length;
  const tokens = calls.reduce((t, c) => t + (c.totalTokens ?? 0), 0);
  n = step(
    `the record: ${calls.length} model calls (parent ${perPid(parent.pid)}, worker ${perPid(childPid)}; ${tokens} ` +
      `tokens), ${resumed} resumed waits with no model call, ${audit.length} audit records, ${events.length} events`,
    [
      `audit by action: ${[...byAction]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
      'libos llm-calls, libos audit and libos events --db <this store> show them',
    ],
  );
  expect(
    calls.length === turns && provider.calls === turns,
    n,
    `model calls (${calls.length} recorded, ${provider.calls} made) should equal model turns (${turns}): a resumed wait makes none`,
  );
  expect(
    resumed >= 3 && calls.every((c) => c.status === 'ok'),
    n,
    `at least 3 resumed waits (ask_human, the parent's receive and wait) and no failed model call (got ${resumed})`,
  );
  return {
    parent: parent.pid,
    worker: childPid,
    quanta: quanta.length,
    llm_calls: calls.length,
    resumed,
    audit: audit.length,
    events: events.length,
  };
}

/** The step that showed the latest quantum (for a check whose quantum never came). */
const steps = (seen: readonly { step: number }[]) => seen.at(-1)?.step ?? 0;

async function statuses(rt: Runtime): Promise<Map<string, ProcessInfo>> {
  return new Map((await rt.processes()).map((p) => [p.pid, p]));
}

function describeStatuses(ps: ReadonlyMap<string, ProcessInfo>, role: (pid: string) => string): string {
  return [...ps.values()].map((p) => `${role(p.pid)} ${p.status}${p.waitState?.kind ? ` (${p.waitState.kind})` : ''}`).join(', ');
}
