// The crash suite's workload: a child Node process that crash.test.ts SIGKILLs at a random moment. It runs the
// built packages (plain JavaScript, so it starts without a transform step), reopens the store it is given (so every
// start is a recovery of the previous kill), and then mixes, for ever, scheduler runs with a scripted model and
// host actions: memory ledgers, children and waits on them, questions to a human, ObjectTasks, per-use and
// standing approvals, and an outside-world effect. Every call it makes is journaled before it is made (`intent`)
// and after it returns (`result`), with synchronous appends a SIGKILL cannot half-undo, so the checker knows what
// the runtime told its callers.
//
// usage: node crash-workload.mjs <db> <journal> <effects-log> <epoch> <seed>
// Prints {"event":"loaded"} once imported, waits for one line on stdin (so the test can start it while it still
// checks the previous kill), opens the store, prints {"event":"ready"}, then {"event":"step","n":n} after each host
// step (the test kills it a random number of steps in, so a slow machine does not mean less work per kill) and
// {"event":"effect","n":n} when an effect has acted but its call has not committed (some kills aim there), and also
// {"event":"resumed_effect","n":n} when that call is a saved call resuming (an approved one).
import { existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { capabilities } from '@libos/capabilities';
import { openRuntime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import { CRASH_AGENT_IMAGE, crashEffects, EFFECT_TOOL, effectResource } from './crash-effects.mjs';

const [dbPath, journalPath, effectsPath, epochText, seedText] = process.argv.slice(2);
if (!dbPath || !journalPath || !effectsPath || !/^\d+$/.test(epochText ?? '') || !/^\d+$/.test(seedText ?? '')) {
  throw new Error('usage: crash-workload.mjs <db> <journal> <effects-log> <epoch> <seed>');
}
const EPOCH = Number(epochText);
/** Roles of the root processes; each has its script in `nextCall`. */
const ROLES = ['approver', 'tasker', 'asker', 'parent', 'mem', 'messenger'];
/** Live roots of this epoch the workload keeps, and the most it spawns in one epoch. */
const LIVE_ROOTS = 6;
const MAX_ROOTS_PER_EPOCH = 60;
/** How long an effect that acted waits before its call commits (the window a targeted kill aims at). */
const EFFECT_HOLD_MS = 30;
/** A workload that is never killed stops here (the test then fails: its kill came too late). */
const MAX_RUN_MS = 300_000;
const TERMINAL = new Set(['exited', 'failed', 'killed']);

/** mulberry32: a small seeded generator, so a seed replays the same choices. */
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rng = generator(Number(seedText));
const pick = (list) => list[Math.floor(rng() * list.length)];

const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const born = Date.now();
// One write(2) per line on a descriptor opened for appending: a SIGKILL keeps every line written before it.
const journalFd = openSync(journalPath, 'a');
const journal = (line) => writeSync(journalFd, `${JSON.stringify({ epoch: EPOCH, ms: Date.now() - born, ...line })}\n`);

function nextEffectKey(pid, kind) {
  const n = effectsIssued.get(pid) ?? 0;
  effectsIssued.set(pid, n + 1);
  return `${pid}-${kind}${n}`;
}

say({ event: 'loaded' });
await new Promise((resolve) => createInterface({ input: process.stdin }).once('line', resolve));
process.stdin.once('end', () => process.exit(2)); // the test is gone: nobody will kill this workload
// Effect keys are never reused, even for a call whose fate a kill left unknown: a second effect on one key is
// then always a replay. The journal is the memory of which keys were handed out (read only now: until `go`, the
// previous workload may still be writing it).
const effectsIssued = new Map();
if (existsSync(journalPath)) {
  for (const text of readFileSync(journalPath, 'utf8').split('\n')) {
    if (text.trim() === '') continue;
    let line;
    try {
      line = JSON.parse(text);
    } catch {
      continue; // a line cut by the previous kill
    }
    if (line.k === 'intent' && (line.tool === EFFECT_TOOL || line.tool === 'start_object_task'))
      effectsIssued.set(line.pid, (effectsIssued.get(line.pid) ?? 0) + 1);
  }
}
/** After an effect acted and before its call commits: say so, and hold the moment open for a kill aimed at it. */
let effects = 0;
let resumedEffects = 0;
const afterEffect = async ({ key, resumed }) => {
  say({ event: 'effect', n: ++effects, key });
  if (resumed) say({ event: 'resumed_effect', n: ++resumedEffects, key });
  await new Promise((resolve) => setTimeout(resolve, EFFECT_HOLD_MS));
};
const rt = await openRuntime({
  path: dbPath,
  plugins: [capabilities(), objectMemory(), tasks(), session(), crashEffects({ log: effectsPath, afterEffect })],
});
journal({ k: 'epoch' });
say({ event: 'ready' });

const rows = (fn) => rt.transaction(async (scope) => fn(scope.store));
const exit = (pid) => ({ tool: 'process_exit', args: { message: `done ${pid}` } });

/** The scripted model: each role's next call, computed from the durable state (a reopen loses nothing it needs). */
async function nextCall(pid) {
  const p = await rt.process(pid);
  const role = p.goal.split(':')[1];
  if (role === 'mem') {
    const ledgers = await rows((db) =>
      db
        .selectFrom('om_objects')
        .select(['name', 'version', 'lifecycle_state'])
        .where('namespace', '=', `process:${pid}`)
        .where('name', 'like', 'ledger-%')
        .execute(),
    );
    const live = ledgers.find((o) => o.lifecycle_state === 'live');
    if (!live)
      return ledgers.length >= 3
        ? exit(pid)
        : {
            tool: 'create_memory_object',
            args: { type: 'plan', name: `ledger-${ledgers.length}`, payload: { entries: [] }, immutable: false },
          };
    if (live.version >= 4) return exit(pid);
    return { tool: 'append_memory_object', args: { name: live.name, entry: { seq: live.version } } };
  }
  if (role === 'parent') {
    const kids = await rows((db) =>
      db.selectFrom('processes').select(['pid', 'status']).where('parent_pid', '=', pid).orderBy('created_at').execute(),
    );
    const live = kids.find((k) => !TERMINAL.has(k.status));
    if (live) return { tool: 'wait_child_process', args: { child_pid: live.pid } };
    if (kids.length >= 2) return exit(pid);
    return { tool: 'spawn_child_process', args: { goal: `crash:child:${pid}:${kids.length}` } };
  }
  if (role === 'child') {
    const notes = await rows((db) =>
      db.selectFrom('om_objects').select('oid').where('namespace', '=', `process:${pid}`).where('name', '=', 'note').execute(),
    );
    return notes.length ? exit(pid) : { tool: 'create_memory_object', args: { type: 'observation', name: 'note', payload: { from: pid } } };
  }
  if (role === 'asker') {
    const asked = await rows((db) =>
      db.selectFrom('human_requests').select('status').where('pid', '=', pid).where('kind', '=', 'question').execute(),
    );
    if (asked.length >= 2 || asked.some((q) => q.status === 'pending')) return exit(pid);
    return { tool: 'ask_human', args: { question: `q${asked.length} of ${pid}` } };
  }
  if (role === 'approver') {
    const standing = await rows((db) =>
      db
        .selectFrom('human_requests')
        .select('id')
        .where('pid', '=', pid)
        .where('kind', '=', 'permission')
        .where('prompt', '=', `standing for ${pid}`)
        .execute(),
    );
    if (standing.length === 0)
      return {
        tool: 'request_permission',
        args: { resource: effectResource(`standing-${pid}`), rights: ['write'], reason: `standing for ${pid}` },
      };
    if ((effectsIssued.get(pid) ?? 0) >= 2) return exit(pid);
    return { tool: EFFECT_TOOL, args: { key: nextEffectKey(pid, 'e') } };
  }
  if (role === 'tasker') {
    const owner = await rows((db) =>
      db
        .selectFrom('om_objects')
        .select(['oid', 'lifecycle_state'])
        .where('namespace', '=', `process:${pid}`)
        .where('name', '=', 'owner')
        .executeTakeFirst(),
    );
    if (!owner) return { tool: 'create_memory_object', args: { type: 'plan', name: 'owner', payload: { entries: [] }, immutable: false } };
    const started = await rows((db) =>
      db.selectFrom('object_tasks').select(['task_id', 'status']).where('creator_pid', '=', pid).orderBy('seq').execute(),
    );
    const active = started.find((t) => t.status === 'queued' || t.status === 'running');
    if (active) return { tool: 'wait_object_task', args: { task_id: active.task_id } };
    if (started.length >= 2 || owner.lifecycle_state !== 'live') return exit(pid);
    const key = nextEffectKey(pid, 't');
    return {
      tool: 'start_object_task',
      args: {
        owner_name: 'owner',
        tool: EFFECT_TOOL,
        args: { key },
        inherit_capabilities: [{ resource: effectResource(key), rights: ['write'] }],
      },
    };
  }
  if (role === 'messenger') {
    const taken = await rows((db) =>
      db
        .selectFrom('process_messages')
        .select('id')
        .where('recipient_pid', '=', pid)
        .where('channel', '=', 'inbox')
        .where('status', '=', 'acked')
        .execute(),
    );
    return taken.length ? exit(pid) : { tool: 'receive_process_messages', args: { block: true, channel: 'inbox' } };
  }
  return exit(pid);
}

let turns = 0;
const provider = {
  name: 'crash-script',
  model: 'crash-script',
  async completeAction(req) {
    const pid = req.pid ?? '';
    const call = await nextCall(pid);
    journal({ k: 'intent', by: 'model', pid, tool: call.tool, args: call.args });
    return {
      content: null,
      toolCalls: [{ id: `crash_${++turns}`, name: call.tool, arguments: call.args }],
      api: 'scripted',
      model: 'crash-script',
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    };
  },
};

/** What the checker needs of a result's payload to find the state change it reports. */
function brief(payload) {
  if (payload === null || typeof payload !== 'object') return null;
  const out = {};
  for (const k of ['oid', 'name', 'version', 'pid', 'child_pid', 'request_id', 'key', 'status'])
    if (payload[k] !== undefined) out[k] = payload[k];
  if (payload.task && typeof payload.task === 'object') out.task_id = payload.task.task_id;
  return out;
}
function journalResult(pid, r) {
  journal({
    k: 'result',
    pid,
    tool: r.tool,
    call_id: r.call_id,
    ok: r.ok,
    wait: r.ok ? (r.wait ?? null) : null,
    code: r.ok ? null : r.error.code,
    payload: r.ok ? brief(r.payload) : null,
  });
}

/** A host call as process `pid` (what the CLI's `libos call` or the HTTP API does), journaled both ways. */
async function hostCall(pid, tool, args) {
  journal({ k: 'intent', by: 'host', pid, tool, args });
  journalResult(pid, await rt.call(pid, tool, args));
}

const GRANTS = {
  mem: [],
  parent: [['process:spawn', ['write']]],
  asker: [['human:owner', ['write']]],
  approver: [
    ['human:owner', ['write']],
    ['crash_effect:*', ['write'], { effect: 'ask' }],
  ],
  tasker: [
    ['process:spawn', ['write']],
    ['crash_effect:*', ['write'], { delegable: true }],
  ],
  messenger: [],
};
let spawned = 0;
async function topUpRoots() {
  if (spawned >= MAX_ROOTS_PER_EPOCH) return;
  const live = await rows((db) =>
    db
      .selectFrom('processes')
      .select('pid')
      .where('parent_pid', 'is', null)
      .where('goal', 'like', `crash:%:e${EPOCH}:%`)
      .where('status', 'not in', [...TERMINAL])
      .execute(),
  );
  if (live.length >= LIVE_ROOTS) return;
  const role = ROLES[(spawned + EPOCH) % ROLES.length];
  const p = await rt.spawn({ image: CRASH_AGENT_IMAGE, goal: `crash:${role}:e${EPOCH}:${spawned++}` });
  journal({ k: 'spawned', pid: p.pid, role });
  for (const [resource, rights, opts] of GRANTS[role]) await rt.grant(p.pid, resource, rights, opts ?? {});
}

const byStatus = (statuses) =>
  rows((db) => db.selectFrom('processes').select(['pid', 'status', 'wait_state', 'goal']).where('status', 'in', statuses).execute());

async function answerOne() {
  const pending = await rt.humanRequests({ status: 'pending' });
  if (pending.length === 0) return;
  const req = pick(pending);
  const approved = rng() < 0.75;
  const answer = req.kind === 'question' ? (approved ? { approved, answer: `answer to ${req.id}` } : { approved }) : { approved };
  const settled = await rt.answerHuman(req.id, answer);
  journal({ k: 'answer', id: req.id, pid: req.pid, status: settled.status });
  // The answered call now waits to resume. A host call that would wait again must not take its place.
  if (rng() < 0.4) {
    if (rng() < 0.5) await hostCall(req.pid, 'ask_human', { question: `host extra ${req.id}` });
    else await hostCall(req.pid, EFFECT_TOOL, { key: nextEffectKey(req.pid, 'h') });
  }
}

async function cancelOne() {
  const pending = await rt.humanRequests({ status: 'pending' });
  if (pending.length === 0) return;
  const req = pick(pending);
  await rt.cancelHumanRequest(req.id, 'crash workload cancels');
  journal({ k: 'cancel', id: req.id, pid: req.pid });
}

async function sendOne() {
  const waiting = (await byStatus(['waiting_event'])).filter((p) => JSON.parse(p.wait_state ?? '{}').kind === 'message');
  if (waiting.length === 0) return;
  const p = pick(waiting);
  const m = await rt.sendMessage(p.pid, { hello: p.pid }, { channel: 'inbox' });
  journal({ k: 'sent', pid: p.pid, id: m.id });
}

async function signalOne(statuses, signal, filter = () => true) {
  const candidates = (await byStatus(statuses)).filter(filter);
  if (candidates.length === 0) return;
  const p = pick(candidates);
  await rt.signal(p.pid, signal, `crash workload ${signal}`);
  journal({ k: 'signal', pid: p.pid, signal });
}

async function runSome() {
  await rt.run({
    provider,
    maxQuanta: 1 + Math.floor(rng() * 6),
    maxEmptyReplies: 3,
    onQuantum: (q) => {
      for (const r of q.results) journalResult(q.pid, r);
    },
  });
}

/** One host step; a refusal by the runtime (a LibosError) is journaled and the workload goes on. */
async function step() {
  await topUpRoots();
  const r = rng();
  if (r < 0.5) return runSome();
  if (r < 0.75) return answerOne();
  if (r < 0.81) return sendOne();
  if (r < 0.88) return signalOne(['paused'], 'resume');
  if (r < 0.91) return signalOne(['runnable'], 'pause');
  if (r < 0.93)
    return signalOne(['runnable', 'waiting_event', 'waiting_human', 'paused'], 'terminate', (p) => p.goal.startsWith('crash:parent:'));
  if (r < 0.95) return cancelOne();
  return runSome();
}

const startedAt = Date.now();
let steps = 0;
for (;;) {
  if (Date.now() - startedAt > MAX_RUN_MS) {
    say({ event: 'timeout' });
    process.exit(3);
  }
  try {
    await step();
  } catch (err) {
    if (!(err && typeof err === 'object' && typeof err.code === 'string' && typeof err.category === 'string')) throw err;
    journal({ k: 'refused', code: err.code, message: String(err.message).slice(0, 300) });
  }
  say({ event: 'step', n: ++steps });
}
