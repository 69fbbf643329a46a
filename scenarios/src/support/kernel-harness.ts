import { capabilities } from '@libos/capabilities';
import {
  openRuntime,
  type AuditRecord,
  type LlmProvider,
  type LlmRequest,
  type LlmResponse,
  type ProcessInfo,
  type Runtime,
  type RuntimeEvent,
  type ScriptedTurn,
  type ToolCallResult,
} from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { definePlugin, defineTool, sequentialIds, skillFromText, z, type ObjectsService, type Plugin, type StoreDialect } from '@libos/sdk';
import { session } from '@libos/session';

/**
 * The one harness of the kernel scenario files (processes, scheduler, reopen, mailbox, human waits, executor, openai,
 * and the crash fixtures): a real runtime over SQLite with the capability, Object Memory and session plugins,
 * predictable ids, a `probe` plugin whose tool records every run (so a test can prove a refused call never ran), and
 * helpers for supervisors, children, scripted providers and store reads.
 */

export const CHILD_SKILL = 'agent-libos-child-processes';
export const MEMORY_SKILL = 'agent-libos-object-memory';
export const PROBE_SKILL = 'test-probe';
/** The callable (and, through its default Skills, visible) table of PROBE_IMAGE. */
export const PROBE_TOOLS = [
  'discover_skills',
  'activate_skill',
  'unload_skill',
  'process_exit',
  'get_current_time',
  'list_memory_namespace',
  'create_memory_object',
  'read_memory_object',
  'spawn_child_process',
  'wait_child_process',
  'signal_child_process',
  'send_process_message',
  'receive_process_messages',
  'read_process_messages',
  'ask_human',
  'probe_touch',
];
/** An image with the session, memory, child-process, mailbox and probe tools, all visible from the start. */
export const PROBE_IMAGE = 'probe-agent:v0';
/** An `image_only` image: its system prompt is sent verbatim. */
export const IMAGE_ONLY = 'probe-only:v0';
export const IMAGE_ONLY_PROMPT = 'You are PROBE-ONLY.\nAnswer with exactly one tool call.\n  (indentation and "quotes" kept verbatim)';

const PROBE_SKILL_MD = `---
name: ${PROBE_SKILL}
description: A probe tool for kernel tests; it records every run.
allowed-tools: probe_touch
---
Call probe_touch with a label; it returns the label and how many times it ran.
`;

export interface Probe {
  readonly plugin: Plugin;
  /** Labels of every completed run, in order. */
  readonly runs: string[];
}

/** The probe plugin: `probe_touch{label}` appends to `runs` and returns `{label, run}`; and the two test images. */
export function probePlugin(): Probe {
  const runs: string[] = [];
  const touch = defineTool({
    name: 'probe_touch',
    description: 'Record a touch with a label.',
    input: z.object({ label: z.string().min(1).max(64) }),
    output: z.object({ label: z.string(), run: z.number() }),
    async run({ label }, ctx) {
      runs.push(label);
      await ctx.events.emit('probe_touched', { pid: ctx.pid, label });
      return { label, run: runs.length };
    },
  });
  const plugin = definePlugin({
    name: 'test-probe',
    version: '0.0.0',
    skills: [skillFromText(PROBE_SKILL_MD, PROBE_SKILL)],
    tools: [touch],
    images: [
      {
        id: PROBE_IMAGE,
        description: 'Base agent tools plus probe_touch; mailbox tools visible at spawn.',
        systemPrompt: 'You are a probe agent.',
        promptMode: 'libos_default',
        defaultSkills: [
          'agent-libos-skill-navigation',
          'agent-libos-runtime-session',
          'agent-libos-object-memory',
          CHILD_SKILL,
          PROBE_SKILL,
        ],
        defaultTools: PROBE_TOOLS,
      },
      {
        id: IMAGE_ONLY,
        description: 'image_only test image.',
        systemPrompt: IMAGE_ONLY_PROMPT,
        promptMode: 'image_only',
        defaultSkills: ['agent-libos-runtime-session', PROBE_SKILL],
        defaultTools: ['process_exit', 'probe_touch'],
      },
    ],
  });
  return { plugin, runs };
}

export interface Harness {
  readonly rt: Runtime;
  readonly probe: Probe;
}

/**
 * Opens a runtime with capabilities, Object Memory, session and the probe plugin, and sequential ids (in memory
 * unless `path` names a file; a reopen passes `idStart` past the ids the first runtime used).
 */
export async function openHarness(opts: { path?: string; idStart?: number } = {}): Promise<Harness> {
  const probe = probePlugin();
  const rt = await openRuntime({
    path: opts.path ?? ':memory:',
    plugins: [capabilities(), objectMemory(), session(), probe.plugin],
    config: { ids: sequentialIds(opts.idStart ?? 0) },
  });
  return { rt, probe };
}

/** Spawns a probe-agent process (a root, or a host-side child of `parentPid`). */
export async function spawnProbe(rt: Runtime, goal: string, parentPid?: string): Promise<string> {
  const p = await rt.spawn({ goal, image: PROBE_IMAGE, ...(parentPid ? { parentPid } : {}) });
  return p.pid;
}

export type Json = any;

/** Calls a tool and returns its payload; throws (failing the test) when the call failed. */
export async function ok(rt: Runtime, pid: string, tool: string, args: Record<string, unknown> = {}): Promise<Json> {
  const r = await rt.call(pid, tool, args);
  if (!r.ok) throw new Error(`${tool} failed: ${JSON.stringify(r.error)}`);
  return r.payload;
}

/** Calls a tool that must fail and returns its error. */
export async function fails(
  rt: Runtime,
  pid: string,
  tool: string,
  args: Record<string, unknown> = {},
): Promise<{ code: string; message: string; details?: Json }> {
  const r: ToolCallResult = await rt.call(pid, tool, args);
  if (r.ok) throw new Error(`${tool} unexpectedly succeeded: ${JSON.stringify(r.payload)}`);
  return r.error;
}

/**
 * Groups the events the bus publishes by commit: the kernel publishes a transaction's events synchronously after its
 * commit, so events of one transaction land in one group and events of separate transactions in separate groups.
 */
export function commitGroups(rt: Runtime): { groups: string[][]; stop: () => void } {
  const groups: string[][] = [];
  let current: string[] | null = null;
  const listener = (e: RuntimeEvent) => {
    if (!current) {
      current = [];
      groups.push(current);
      queueMicrotask(() => {
        current = null;
      });
    }
    current.push(e.type);
  };
  return { groups, stop: rt.watch({ event: listener }) };
}

// Processes, children and scripted providers (the processes, scheduler and reopen scenarios).

/**
 * A runtime with the plugins the scenarios use. Ids are sequential from `idStart` so pids are predictable; a
 * reopened store needs a start past every id the first runtime used.
 */
export async function openKernel(path = ':memory:', idStart = 0, extraPlugins: readonly Plugin[] = []): Promise<Runtime> {
  return openRuntime({
    path,
    plugins: [capabilities(), objectMemory(), session(), ...extraPlugins],
    config: { ids: sequentialIds(idStart) },
  });
}

/** A root process that may activate Skills, spawn children and ask the owner, with the child-processes and Object Memory Skills active. */
export async function supervisor(
  rt: Runtime,
  goal = 'supervise children',
  opts: { budget?: Parameters<Runtime['spawn']>[0]['budget'] } = {},
): Promise<ProcessInfo> {
  const p = await rt.spawn({ goal, ...(opts.budget ? { budget: opts.budget } : {}) });
  await rt.grant(p.pid, 'skill:*', ['execute']);
  await rt.grant(p.pid, 'process:spawn', ['write']);
  await rt.grant(p.pid, 'human:owner', ['write']);
  await rt.activateSkill(p.pid, CHILD_SKILL);
  await rt.activateSkill(p.pid, MEMORY_SKILL);
  return rt.process(p.pid);
}

/** Spawns a direct child of `parentPid` through `spawn_child_process` and returns its pid (fails the test otherwise). */
export async function spawnChild(rt: Runtime, parentPid: string, args: Record<string, unknown> = { goal: 'child work' }): Promise<string> {
  const r = await rt.call(parentPid, 'spawn_child_process', args);
  if (!r.ok) throw new Error(`spawn_child_process failed: ${JSON.stringify(r.error)}`);
  return (r.payload as { pid: string }).pid;
}

/** Gives a child what `supervisor` gives a root (grants are the host's to give: the child inherits none). */
export async function equip(rt: Runtime, pid: string): Promise<void> {
  await rt.grant(pid, 'skill:*', ['execute']);
  await rt.grant(pid, 'human:owner', ['write']);
  await rt.grant(pid, 'process:spawn', ['write']);
  await rt.activateSkill(pid, CHILD_SKILL);
  await rt.activateSkill(pid, MEMORY_SKILL);
}

/**
 * A provider whose turns are computed from runtime state: `turn(pid, n)` gets the pid and how many turns that pid
 * had before. Counts every call (per pid too), like `ScriptedProvider.calls`.
 */
export class StateProvider implements LlmProvider {
  readonly name = 'state-scripted';
  readonly model = 'state-scripted';
  readonly perPid = new Map<string, number>();
  calls = 0;
  constructor(private readonly turn: (pid: string, n: number) => ScriptedTurn | Promise<ScriptedTurn>) {}

  async completeAction(req: LlmRequest): Promise<LlmResponse> {
    const pid = req.pid ?? '';
    const n = this.perPid.get(pid) ?? 0;
    this.perPid.set(pid, n + 1);
    this.calls++;
    const turn = await this.turn(pid, n);
    return {
      content: null,
      toolCalls: turn.map((c, i) => ({ id: `state_${this.calls}_${i}`, name: c.tool, arguments: structuredClone(c.args ?? {}) })),
      api: 'scripted',
      model: this.model,
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    };
  }
}

/** The `llm.action_batch` audit rows of one pid, oldest first. */
export async function batches(rt: Runtime, pid: string): Promise<AuditRecord[]> {
  return rt.audit({ pid, action: 'llm.action_batch', limit: 10_000 });
}

/** Names of the named Objects in a process's scope (its goal and what it created by name; not tool results or summaries). */
export async function objectNames(rt: Runtime, pid: string): Promise<string[]> {
  return rt.transaction(async (scope) => {
    const rows = await (scope.store as Json)
      .selectFrom('om_objects')
      .select('name')
      .where('namespace', '=', `process:${pid}`)
      .orderBy('name')
      .execute();
    return rows.map((r: Json) => r.name as string).filter((n: string) => !/^(tool_result|summary):/.test(n));
  });
}

/** The objects service, host-side (no authority). */
export async function withObjects<T>(rt: Runtime, fn: (objects: ObjectsService) => Promise<T>): Promise<T> {
  return rt.transaction((scope) => fn(scope.service<ObjectsService>('objects')));
}

/** The dialect of the store `rt` is open on (a `postgres://` location is PostgreSQL's). */
export const storeDialect = (rt: Runtime): StoreDialect => (/^postgres(?:ql)?:\/\//i.test(rt.location) ? 'postgres' : 'sqlite');

/** A failing INSERT to inject with `failInsertsWhere`: rows of `table` whose `column` equals `value` fail with `message`. */
export interface InsertFailure {
  /** The trigger's name (and, on PostgreSQL, its function's): a lowercase SQL name. */
  readonly name: string;
  readonly table: string;
  readonly column: string;
  readonly value: string;
  readonly message: string;
}

/**
 * Installs a trigger in the store that aborts each INSERT of a matching row with `message` (a failing store, from
 * outside the code under test), and returns what drops it again. On SQLite a `RAISE(ABORT, …)` trigger; on
 * PostgreSQL a PL/pgSQL trigger function raising the message. Values are test constants, quoted here.
 *
 * @example
 * const heal = await failInsertsWhere(rt, { name: 'fail_wake', table: 'events', column: 'type', value: 'process_woken', message: 'down' });
 * await heal();
 */
export async function failInsertsWhere(rt: Runtime, f: InsertFailure): Promise<() => Promise<void>> {
  const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;
  if (storeDialect(rt) === 'postgres') {
    await rawSql(
      rt,
      `CREATE FUNCTION ${f.name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION ${quote(f.message)}; END $$`,
    );
    await rawSql(
      rt,
      `CREATE TRIGGER ${f.name} BEFORE INSERT ON ${f.table} FOR EACH ROW WHEN (NEW.${f.column} = ${quote(f.value)}) ` +
        `EXECUTE FUNCTION ${f.name}()`,
    );
    return async () => {
      await rawSql(rt, `DROP TRIGGER ${f.name} ON ${f.table}`);
      await rawSql(rt, `DROP FUNCTION ${f.name}()`);
    };
  }
  await rawSql(
    rt,
    `CREATE TRIGGER ${f.name} BEFORE INSERT ON ${f.table} WHEN NEW.${f.column} = ${quote(f.value)} BEGIN SELECT RAISE(ABORT, ` +
      `${quote(f.message)}); END`,
  );
  return () => rawSql(rt, `DROP TRIGGER ${f.name}`);
}

/**
 * Runs one raw SQL statement on the store in a host transaction (failure injection: triggers). The scenarios
 * package does not depend on kysely, so this hands the transaction a compiled query it can execute as is.
 */
export async function rawSql(rt: Runtime, text: string): Promise<void> {
  await rt.transaction(async (scope) => {
    await scope.store.executeQuery({
      sql: text,
      parameters: [],
      query: { kind: 'RawNode', sqlFragments: [text], parameters: [] },
      queryId: { queryId: 'scenario_raw_sql' },
    } as never);
  });
}
