// The crash suite's invariants: what must hold on a store reopened after a SIGKILL, whatever the moment of the kill.
// Each check returns violations as sentences (empty = it holds). The journal is what the workload's callers were
// told (crash-workload.mjs); the effect lines are what crash_effect did to the outside world.
import { readFileSync, existsSync } from 'node:fs';
import { ScriptedProvider, type Runtime } from '@libos/kernel';
import { ACTIVE_TASK_STATUSES } from '@libos/tasks';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** One line of the workload's journal. */
export interface JournalLine {
  readonly epoch: number;
  readonly k: 'epoch' | 'intent' | 'result' | 'answer' | 'cancel' | 'sent' | 'signal' | 'spawned' | 'refused';
  readonly pid?: string;
  readonly tool?: string;
  readonly args?: unknown;
  readonly call_id?: string;
  readonly ok?: boolean;
  readonly wait?: { readonly kind: string; readonly request_ids?: readonly string[] } | null;
  readonly code?: string | null;
  readonly payload?: Readonly<Record<string, Json>> | null;
  readonly id?: string;
  readonly status?: string;
}

/** One outside-world line of crash_effect. */
export interface EffectLine {
  readonly key: string;
  readonly pid: string;
  readonly call_id: string;
}

/** Parses a JSON-lines file; a last line cut by the kill is dropped, a broken line anywhere else throws. */
export function readJsonLines<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  const texts = readFileSync(path, 'utf8').split('\n');
  const out: T[] = [];
  texts.forEach((text, i) => {
    if (text.trim() === '') return;
    try {
      out.push(JSON.parse(text) as T);
    } catch (err) {
      if (i < texts.length - 1 && texts.slice(i + 1).some((t) => t.trim() !== ''))
        throw new Error(`${path}:${i + 1} is not JSON: ${(err as Error).message}`);
    }
  });
  return out;
}

const TERMINAL = new Set(['exited', 'failed', 'killed']);
/** Tools whose every successful call changes state: the same call (caller, tool, arguments) may succeed once only. */
const EFFECTFUL = new Set([
  'create_memory_object',
  'append_memory_object',
  'spawn_child_process',
  'ask_human',
  'request_permission',
  'start_object_task',
  'crash_effect',
  'process_exit',
]);

interface Audit {
  readonly actor: string;
  readonly action: string;
  readonly target: string | null;
  readonly decision: string | null;
  readonly call_id: string | null;
  readonly details: Json;
}

/** The store as the checks read it, in one transaction. */
interface Snapshot {
  readonly processes: { pid: string; parent_pid: string | null; status: string; goal: string; outcome: string | null }[];
  readonly runners: Set<string>;
  readonly pending: { pid: string; status: string; call_id: string; wait: string }[];
  readonly requests: { id: string; pid: string; kind: string; status: string }[];
  readonly objects: { oid: string; namespace: string; name: string; version: number }[];
  readonly tasks: { task_id: string; creator_pid: string; status: string }[];
  readonly effects: { key: string; pid: string; call_id: string }[];
  readonly toolCalls: Audit[];
  readonly answers: Audit[];
  readonly resumedEvents: Set<string>;
}

async function snapshot(rt: Runtime): Promise<Snapshot> {
  return rt.transaction(async (scope) => {
    const db = scope.store as Json;
    const audits = (action: string): Promise<Audit[]> =>
      db
        .selectFrom('audit_records')
        .select(['actor', 'action', 'target', 'decision', 'call_id', 'details'])
        .where('action', '=', action)
        .orderBy('seq')
        .execute()
        .then((rows: Json[]) => rows.map((r) => ({ ...r, details: JSON.parse(r.details) })));
    const resumed = await db.selectFrom('events').select('data').where('type', '=', 'tool_resumed').execute();
    return {
      processes: await db
        .selectFrom('processes')
        .select(['pid', 'parent_pid', 'status', 'goal', 'outcome'])
        .orderBy('created_at')
        .execute(),
      runners: new Set<string>((await db.selectFrom('process_runners').select('pid').execute()).map((r: Json) => r.pid)),
      pending: await db.selectFrom('pending_actions').select(['pid', 'status', 'call_id', 'wait']).execute(),
      requests: await db.selectFrom('human_requests').select(['id', 'pid', 'kind', 'status']).orderBy('seq').execute(),
      objects: await db.selectFrom('om_objects').select(['oid', 'namespace', 'name', 'version']).execute(),
      tasks: await db.selectFrom('object_tasks').select(['task_id', 'creator_pid', 'status']).execute(),
      effects: await db.selectFrom('crash_effects').select(['key', 'pid', 'call_id']).orderBy('seq').execute(),
      toolCalls: await audits('tool.call'),
      answers: await audits('human.answer'),
      resumedEvents: new Set<string>(resumed.map((r: Json) => JSON.parse(r.data).call_id)),
    };
  });
}

/** Rows of one raw SQL statement, on the runtime's own connection (the scenarios package has no kysely of its own). */
export async function rawRows(rt: Runtime, sql: string): Promise<Record<string, unknown>[]> {
  return rt.transaction(async (scope) => {
    const r = await (scope.store as Json).executeQuery({
      sql,
      parameters: [],
      query: { kind: 'RawNode', sqlFragments: [sql], parameters: [] },
      queryId: { queryId: 'crash_raw' },
    });
    return r.rows as Record<string, unknown>[];
  });
}

/** `PRAGMA integrity_check`: one row, `ok`. */
export async function integrityViolations(rt: Runtime): Promise<string[]> {
  const rows = await rawRows(rt, 'PRAGMA integrity_check');
  const verdicts = rows.map((r) => String(Object.values(r)[0]));
  return verdicts.length === 1 && verdicts[0] === 'ok' ? [] : [`integrity_check: ${verdicts.slice(0, 5).join('; ')}`];
}

/** Nothing is mid-flight: no process `running`, no saved call `resuming`, and (right after a reopen) no active task. */
function nothingRunning(s: Snapshot, opts: { tasks: boolean }): string[] {
  const out = s.processes.filter((p) => p.status === 'running').map((p) => `process ${p.pid} is running`);
  out.push(...s.pending.filter((a) => a.status !== 'pending').map((a) => `saved call ${a.call_id} of ${a.pid} is ${a.status}`));
  const active = new Set<string>(ACTIVE_TASK_STATUSES);
  if (opts.tasks) out.push(...s.tasks.filter((t) => active.has(t.status)).map((t) => `task ${t.task_id} is ${t.status} after the reopen`));
  return out;
}

/** No live process whose parent is terminal (an ObjectTask runner may outlive a creator that exited: by design). */
function noOrphans(s: Snapshot): string[] {
  const byPid = new Map(s.processes.map((p) => [p.pid, p]));
  const out: string[] = [];
  for (const p of s.processes) {
    const parent = p.parent_pid ? byPid.get(p.parent_pid) : undefined;
    if (!parent || TERMINAL.has(p.status) || !TERMINAL.has(parent.status)) continue;
    if (s.runners.has(p.pid) && parent.status === 'exited') continue;
    out.push(`orphan: ${p.pid} is ${p.status} but its parent ${parent.pid} is ${parent.status}`);
  }
  return out;
}

const count = <T>(list: readonly T[], keyOf: (x: T) => string): Map<string, number> => {
  const m = new Map<string, number>();
  for (const x of list) m.set(keyOf(x), (m.get(keyOf(x)) ?? 0) + 1);
  return m;
};
/** The request ids a tool.call audit says its call waits on. */
const waitedRequests = (a: Audit): string[] =>
  a.decision === 'approval_required'
    ? [String(a.details.request_id)]
    : a.decision === 'waiting' && a.details.wait?.kind === 'human'
      ? (a.details.wait.request_ids as string[])
      : [];

/** What each successful call the journal saw changed, per tool, found in the store. */
function stateOfResult(s: Snapshot, r: JournalLine): string | null {
  const p = r.payload ?? {};
  const obj = (oid: unknown) => s.objects.find((o) => o.oid === oid);
  switch (r.tool) {
    case 'create_memory_object':
      return obj(p.oid) ? null : `object ${p.oid} is missing`;
    case 'append_memory_object':
      return (obj(p.oid)?.version ?? 0) >= p.version ? null : `object ${p.oid} is below version ${p.version}`;
    case 'spawn_child_process':
      return s.processes.some((c) => c.pid === p.pid && c.parent_pid === r.pid) ? null : `child ${p.pid} of ${r.pid} is missing`;
    case 'crash_effect':
      return s.effects.some((e) => e.call_id === r.call_id) ? null : `no crash_effects row for ${r.call_id}`;
    case 'start_object_task':
      return s.tasks.some((t) => t.task_id === p.task_id) ? null : `task ${p.task_id} is missing`;
    case 'process_exit':
      return s.processes.find((x) => x.pid === r.pid)?.status === 'exited' ? null : `${r.pid} is not exited`;
    case 'ask_human':
      return s.requests.find((q) => q.id === p.request_id)?.status === 'approved' ? null : `question ${p.request_id} is not approved`;
    default:
      return null;
  }
}

/**
 * Every call the runtime reported has its audit, and every audited success its state change (both ways where the
 * store can tell): results in the journal, ledger versions against audited appends, effect rows against audited
 * effects, children and tasks against audited spawns and starts, human requests against the calls that wait on
 * them, host answers against the queue. A successful effectful call (same caller, tool and arguments) appears once.
 */
function auditsMatchState(s: Snapshot, journal: readonly JournalLine[]): string[] {
  const out: string[] = [];
  const byCall = new Map<string, Audit[]>();
  for (const a of s.toolCalls) if (a.call_id) byCall.set(a.call_id, [...(byCall.get(a.call_id) ?? []), a]);
  const ok = s.toolCalls.filter((a) => a.decision === 'ok');
  const okBy = (tool: string, actor?: string) =>
    ok.filter((a) => a.target === `tool:${tool}` && (actor === undefined || a.actor === actor));

  for (const r of journal) {
    if (r.k !== 'result' || !r.call_id || r.code === 'process_not_found') continue;
    const decisions = (byCall.get(r.call_id) ?? [])
      .filter((a) => a.target === `tool:${r.tool}` && a.actor === r.pid)
      .map((a) => a.decision);
    const want = !r.ok ? [r.code] : r.wait ? ['waiting', 'approval_required'] : ['ok'];
    if (!decisions.some((d) => want.includes(d))) {
      const told = r.ok ? (r.wait ? 'a wait' : 'ok') : r.code;
      out.push(
        `${r.tool} call ${r.call_id} of ${r.pid} returned ${told} but its audit has ${decisions.length ? decisions.join(', ') : 'nothing'}`,
      );
      continue;
    }
    const missing = r.ok && !r.wait ? stateOfResult(s, r) : null;
    if (missing) out.push(`${r.tool} call ${r.call_id} of ${r.pid} succeeded and is audited, but ${missing}`);
  }

  for (const [key, n] of count(
    ok.filter((a) => EFFECTFUL.has((a.target ?? '').replace(/^tool:/, ''))),
    (a) => `${a.actor} ${a.target} ${a.details.args_sha256}`,
  )) {
    if (n > 1) out.push(`the same call succeeded ${n} times (caller, tool, arguments sha256: ${key})`);
  }

  // Ledgers: only their owner appends to them, one version per append, so the versions a process's ledgers gained
  // are exactly its audited successful appends (a lost audit, a lost append or an append applied twice breaks it).
  const gained = new Map<string, number>();
  for (const o of s.objects.filter((x) => /^ledger-\d+$/.test(x.name))) {
    const owner = o.namespace.replace(/^process:/, '');
    gained.set(owner, (gained.get(owner) ?? 0) + o.version - 1);
  }
  const appended = count(okBy('append_memory_object'), (a) => a.actor);
  for (const owner of new Set([...gained.keys(), ...appended.keys()])) {
    const [g, n] = [gained.get(owner) ?? 0, appended.get(owner) ?? 0];
    if (g !== n) out.push(`the ledgers of ${owner} gained ${g} versions but ${n} appends of ${owner} are audited ok`);
  }
  // Effects: one row per audited success, by call id, each key at most once.
  const effectCalls = new Set(okBy('crash_effect').map((a) => a.call_id ?? ''));
  const rowCalls = new Set(s.effects.map((e) => e.call_id));
  for (const e of s.effects)
    if (!effectCalls.has(e.call_id)) out.push(`crash_effects row ${e.key} (call ${e.call_id}) has no successful audit`);
  for (const c of effectCalls) if (!rowCalls.has(c)) out.push(`crash_effect call ${c} is audited ok but has no row`);
  for (const [key, n] of count(s.effects, (e) => e.key)) if (n > 1) out.push(`crash_effects has ${n} rows for key ${key}`);
  // Children and tasks: as many as the audited spawns and starts of each caller.
  const kids = count(
    s.processes.filter((p) => p.parent_pid && !s.runners.has(p.pid)),
    (p) => p.parent_pid!,
  );
  for (const [parent, n] of count(okBy('spawn_child_process'), (a) => a.actor))
    if ((kids.get(parent) ?? 0) !== n) out.push(`${parent} has ${kids.get(parent) ?? 0} children but ${n} audited spawns`);
  for (const [parent, n] of kids)
    if (!okBy('spawn_child_process', parent).length) out.push(`${parent} has ${n} children but no audited spawn`);
  const started = count(s.tasks, (t) => t.creator_pid);
  const startAudits = count(okBy('start_object_task'), (a) => a.actor);
  for (const creator of new Set([...started.keys(), ...startAudits.keys()])) {
    if ((started.get(creator) ?? 0) !== (startAudits.get(creator) ?? 0))
      out.push(`${creator} has ${started.get(creator) ?? 0} tasks but ${startAudits.get(creator) ?? 0} audited starts`);
  }
  // Human requests: each was made by an audited call of its process that waits on it, and each waited-on id exists.
  const waitedOn = new Map<string, string>();
  for (const a of s.toolCalls) for (const id of waitedRequests(a)) if (!waitedOn.has(id)) waitedOn.set(id, a.actor);
  for (const q of s.requests)
    if (waitedOn.get(q.id) !== q.pid) out.push(`human request ${q.id} of ${q.pid} has no audited call waiting on it`);
  const ids = new Set(s.requests.map((q) => q.id));
  for (const id of waitedOn.keys()) if (!ids.has(id)) out.push(`an audited call waits on human request ${id}, which does not exist`);
  // Host answers: the queue holds the answer the host was told it gave, and the answer is audited.
  const answerAudits = new Set(s.answers.map((a) => a.target));
  for (const r of journal.filter((l) => l.k === 'answer')) {
    const q = s.requests.find((x) => x.id === r.id);
    if (q?.status !== r.status) out.push(`human request ${r.id} was answered ${r.status} but is ${q?.status ?? 'missing'}`);
    if (!answerAudits.has(`human_request:${r.id}`)) out.push(`the answer to human request ${r.id} is not audited`);
  }
  return out;
}

/**
 * No effect twice: each key's outside-world action happened at most once (across the workload's runs and the
 * checker's), and every committed effect (a row) did happen.
 */
function effectsOnce(s: Snapshot, lines: readonly EffectLine[]): string[] {
  const out: string[] = [];
  const perKey = count(lines, (l) => l.key);
  for (const [key, n] of perKey)
    if (n > 1)
      out.push(
        `effect ${key} happened ${n} times (calls ${lines
          .filter((l) => l.key === key)
          .map((l) => l.call_id)
          .join(', ')})`,
      );
  for (const e of s.effects) if (!perKey.has(e.key)) out.push(`effect ${e.key} is committed but never happened`);
  return out;
}

/**
 * No answered request lost: the call that waits on an approved or rejected request resumed (its `tool_resumed` event,
 * or a resumed call's audit), unless its process ended by failure or a kill before it could. Run after `settle`.
 */
function answeredNotLost(s: Snapshot): string[] {
  const out: string[] = [];
  const status = new Map(s.processes.map((p) => [p.pid, p.status]));
  const resumed = new Set(s.resumedEvents);
  for (const a of s.toolCalls) if (a.call_id && a.details.resumed === true) resumed.add(a.call_id);
  const waiter = new Map<string, Audit>();
  for (const a of s.toolCalls) for (const id of waitedRequests(a)) if (!waiter.has(id)) waiter.set(id, a);
  for (const q of s.requests.filter((x) => x.status === 'approved' || x.status === 'rejected')) {
    const w = waiter.get(q.id);
    if (!w?.call_id || resumed.has(w.call_id)) continue;
    const st = status.get(q.pid);
    if (st === 'failed' || st === 'killed') continue;
    out.push(
      `answered request lost: ${q.id} (${q.status}) of ${q.pid}; its call ${w.call_id} (${w.target}) never resumed and ${q.pid} is ${st}`,
    );
  }
  return out;
}

/** The invariants of a store just reopened after a kill (before anything runs on it). */
export async function checkReopened(rt: Runtime, journal: readonly JournalLine[], effects: readonly EffectLine[]): Promise<string[]> {
  const s = await snapshot(rt);
  return [
    ...(await integrityViolations(rt)),
    ...nothingRunning(s, { tasks: true }),
    ...noOrphans(s),
    ...auditsMatchState(s, journal),
    ...effectsOnce(s, effects),
  ];
}

/**
 * Lets everything that can finish, finish: answers every pending request (approving), resumes every paused
 * process, and runs the scheduler until idle with a model whose every turn is `process_exit`. Returns a violation
 * if the runtime does not come to rest.
 */
export async function settle(rt: Runtime, maxQuanta = 5_000): Promise<string[]> {
  for (let round = 0; round < 5; round++) {
    const pending = await rt.humanRequests({ status: 'pending' });
    for (const q of pending) await rt.answerHuman(q.id, q.kind === 'question' ? { approved: true, answer: 'settled' } : { approved: true });
    const paused = (await rt.processes()).filter((p) => p.status === 'paused');
    for (const p of paused) await rt.signal(p.pid, 'resume');
    const report = await rt.run({ provider: new ScriptedProvider([]), maxQuanta });
    if (!report.idle) return [`the runtime was still busy after ${maxQuanta} quanta`];
    if (pending.length === 0 && paused.length === 0) return [];
  }
  return ['pending human requests or paused processes kept coming back after 5 rounds'];
}

/** The invariants after `settle`: the reopen invariants again (the checker's own effects included) and no answer lost. */
export async function checkSettled(rt: Runtime, journal: readonly JournalLine[], effects: readonly EffectLine[]): Promise<string[]> {
  const s = await snapshot(rt);
  return [
    ...(await integrityViolations(rt)),
    ...nothingRunning(s, { tasks: false }),
    ...noOrphans(s),
    ...auditsMatchState(s, journal),
    ...effectsOnce(s, effects),
    ...answeredNotLost(s),
  ];
}
