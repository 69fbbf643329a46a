import type { ProcessInfo, Runtime } from '@libos/kernel';
import type { Right } from '@libos/sdk';
import type { Verdict } from './fuzz-surfaces.js';
import type { KnownStrings } from './schema-arbitrary.js';

/**
 * The process the fuzzer calls tools as, and what it has learnt: a root process holding broad, delegable grants
 * with every Skill active, a mutable Object, a child and a task, replaced by a fresh one whenever it can no longer
 * call tools (it exited, waits on a human, a timer, a child, a task or its mailbox, or spent its budget); and a
 * pool of ids and names seen in results, so generated
 * arguments name things that exist (a child pid, an Object name, a task id, a capability id).
 */

/** Broad rights: every resource kind a tool checks, with every right it checks for, delegable. */
const BROAD_GRANTS: readonly (readonly [string, readonly Right[]])[] = [
  ['skill:*', ['read', 'execute']],
  ['process:*', ['read', 'write']],
  ['image:*', ['read']],
  ['human:*', ['write']],
  ['clock:*', ['read']],
  ['object:*', ['read', 'write', 'materialize', 'grant', 'link', 'diff', 'delete']],
  ['object_namespace:*', ['read', 'write']],
];

/** Argument fields and the result keys whose values fit them, the likeliest first. */
const ALIASES: Readonly<Record<string, readonly string[]>> = {
  child_pid: ['child_pid', 'pid'],
  to_pid: ['pid', 'child_pid', 'sender_pid'],
  sender_pid: ['sender_pid', 'sender', 'pid'],
  notify_pid: ['pid', 'child_pid'],
  capability_id: ['capability_id', 'cap_id', 'id'],
  task_id: ['task_id'],
  owner_oid: ['oid', 'owner_oid', 'result_oid'],
  result_oid: ['oid', 'result_oid'],
  goal_oid: ['oid'],
  root_oids: ['oid'],
  parent_oids: ['oid'],
  parents: ['oid'],
  owner_name: ['name'],
  name: ['name'],
  namespace: ['namespace'],
  parent_namespace: ['namespace'],
  message_ids: ['message_id'],
  reviewed_message_ids: ['message_id'],
  reply_to: ['message_id'],
  correlation_id: ['correlation_id', 'message_id'],
  skill_id: ['skill_id'],
  image: ['image', 'image_id'],
  tool: ['tool'],
  resource: ['resource'],
  timezone: ['timezone'],
  human: ['human'],
  expected_package_sha256: ['package_sha256'],
  expected_sha256: ['sha256'],
  review_token: ['review_token'],
};

/** The calls that give each fresh fuzz process something to act on. */
const FIXTURE: readonly (readonly [string, Record<string, unknown>])[] = [
  ['create_memory_object', { type: 'plan', name: 'fuzz-ledger', payload: { entries: [] }, immutable: false }],
  ['spawn_child_process', { goal: 'A child the fuzzer can wait on, signal and message.' }],
  ['start_object_task', { owner_name: 'fuzz-ledger', tool: 'get_current_time', args: {} }],
];

const PER_KEY = 48;
const MAX_HARVEST_NODES = 2_000;

/** Strings seen in results, by the key they appeared under (the most recent few per key). */
export class KnownPool {
  readonly #byKey = new Map<string, string[]>();

  add(key: string, value: string): void {
    if (value.length === 0 || value.length > 256) return;
    const list = (this.#byKey.get(key) ?? []).filter((v) => v !== value);
    list.push(value);
    if (list.length > PER_KEY) list.shift();
    this.#byKey.set(key, list);
  }

  /** Records every string of `value` under the key it appears at (bounded walk). */
  harvest(value: unknown): void {
    const stack: { v: unknown; key: string; depth: number }[] = [{ v: value, key: '', depth: 0 }];
    let seen = 0;
    while (stack.length > 0 && seen++ < MAX_HARVEST_NODES) {
      const { v, key, depth } = stack.pop()!;
      if (typeof v === 'string') this.add(key, v);
      else if (depth < 8 && Array.isArray(v)) for (const x of v.slice(0, 50)) stack.push({ v: x, key, depth: depth + 1 });
      else if (depth < 8 && typeof v === 'object' && v !== null) {
        for (const [k, x] of Object.entries(v).slice(0, 50)) stack.push({ v: x, key: k, depth: depth + 1 });
      }
    }
  }

  /** A value seen under a key that fits `key`: the first alias's newest first (generated indexes lean small). */
  readonly known: KnownStrings = (key, index, accept) => {
    const candidates = [...(ALIASES[key] ?? [key])]
      .reverse()
      .flatMap((k) => this.#byKey.get(k) ?? [])
      .filter(accept);
    return candidates.length > 0 ? candidates[candidates.length - 1 - (index % candidates.length)] : undefined;
  };
}

const CALLABLE = new Set(['runnable', 'running']);
/** Refusals that say the caller is not what the fuzzer believed. */
const STALE_CODES = new Set(['process_not_tool_callable', 'tool_not_in_process_table']);

export class FuzzTarget {
  readonly rt: Runtime;
  readonly pool = new KnownPool();
  #pid = '';
  /** The caller as last read; null when a call may have changed it. */
  #known: ProcessInfo | null = null;
  /** The caller has spent its tool-call budget. */
  #retire = false;
  respawns = 0;
  readonly #skillOf: ReadonlyMap<string, string>;

  constructor(rt: Runtime) {
    this.rt = rt;
    this.#skillOf = new Map(rt.skillCatalog().flatMap((s) => s.tools.map((t) => [t, s.skillId] as const)));
    for (const s of rt.skillCatalog()) {
      this.pool.add('skill_id', s.skillId);
      this.pool.add('package_sha256', s.packageSha256);
      for (const t of s.tools) this.pool.add('tool', t);
    }
    for (const image of ['base-agent:v0', 'coding-agent:v0']) this.pool.add('image', image);
    for (const tz of ['UTC', 'Europe/Paris', 'Asia/Kolkata']) this.pool.add('timezone', tz);
    this.pool.add('human', 'owner');
    for (const [resource] of BROAD_GRANTS) this.pool.add('resource', resource);
  }

  /** Every tool of every loaded Skill. */
  tools(): string[] {
    return [...this.#skillOf.keys()];
  }

  /** The pid to call `tool` as: a live, tool-callable process that can see `tool`. */
  async callerFor(tool: string): Promise<string> {
    let p = this.#known;
    if (!p) p = this.#pid ? await this.rt.findProcess(this.#pid) : null;
    if (!p || !CALLABLE.has(p.status) || this.#retire) p = await this.#respawn();
    else if (!p.visibleTools.includes(tool)) p = await this.rt.activateSkill(this.#pid, this.#skillOf.get(tool)!);
    this.#known = p;
    return this.#pid;
  }

  /**
   * After a call: learn from its payload; read away interrupts that would stop every later call. Only a call that
   * succeeded can have changed the caller (exited, waits, unloaded a Skill, exec'd): the next one looks it up again.
   */
  async after(v: Verdict): Promise<void> {
    if (v.kind === 'ok') {
      this.pool.harvest(v.payload);
      this.#known = null;
    }
    if (v.kind === 'error' && STALE_CODES.has(v.code)) this.#known = null;
    // Every call is charged: a caller whose own budget is spent is replaced (a child's budget is not its concern).
    if (v.kind === 'error' && v.code === 'resource_limit_exceeded') {
      this.#retire = (await this.rt.budget(this.#pid)).remaining.tool_calls === 0;
    }
    if (v.kind === 'error' && v.code === 'interrupted_by_message') {
      await this.callerFor('receive_process_messages');
      const r = await this.rt.call(this.#pid, 'receive_process_messages', { limit: 1000 });
      if (!r.ok) throw new Error(`could not read away interrupts of ${this.#pid}: ${JSON.stringify(r.error)}`);
      this.#known = null;
    }
  }

  async #respawn(): Promise<ProcessInfo> {
    const p = await this.rt.spawn({ goal: 'Fuzz every tool of every loaded plugin.' });
    this.#pid = p.pid;
    this.#retire = false;
    this.respawns += 1;
    await this.rt.transaction(async (scope) => {
      for (const [resource, rights] of BROAD_GRANTS) {
        await this.rt.authority.issueTrusted(scope, { subject: p.pid, resource, rights, delegable: true }, 'host');
      }
    });
    for (const skill of new Set(this.#skillOf.values())) {
      if (!p.visibleTools.some((t) => this.#skillOf.get(t) === skill)) await this.rt.activateSkill(p.pid, skill);
    }
    this.pool.add('pid', p.pid);
    this.pool.add('namespace', `process:${p.pid}`);
    this.pool.add('name', 'goal'); // every process scope holds its goal Object
    // Something to act on: a mutable Object, a child, and a task owned by that Object (their ids join the pool).
    for (const [tool, args] of FIXTURE) {
      const r = await this.rt.call(p.pid, tool, args);
      if (r.ok) this.pool.harvest(r.payload);
      // Nothing runs the queued tasks, so the global task capacity fills up: later processes go without one.
      else if (r.error.code !== 'task_capacity_exceeded') {
        throw new Error(`fuzz fixture: ${tool} failed as ${p.pid}: ${JSON.stringify(r.error)}`);
      }
    }
    return this.rt.process(p.pid);
  }
}
