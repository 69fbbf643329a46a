import { request as httpRequest } from 'node:http';
import { capabilities } from '@libos/capabilities';
import { openRuntime, type LlmProvider, type RunReport, type Runtime, type ToolCallResult } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { definePlugin, defineTool, sequentialIds, skillFromText, z, type Plugin } from '@libos/sdk';
import { serve, type RunningServer } from '@libos/server';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/**
 * The world the adversarial stories run in: a real runtime over SQLite with every standard plugin, a clock the
 * story moves by hand, predictable ids, and an `adversary-targets` plugin whose tools change an "outside world"
 * (a map of files) only under `file:<key>` authority, so a story can tell whether an effect really happened.
 */

export const ADV_SKILL = 'test-adversary-targets';
export const ADV_IMAGE = 'adversary-agent:v0';
/** A tool some plugin defines but no image's table holds: its Skill is never active at spawn. */
export const ADV_HIDDEN_TOOL = 'adv_hidden';
/** The Skill that lists only the hidden tool (a process that loaded it would see the tool; none does). */
export const ADV_HIDDEN_SKILL = 'test-adversary-hidden';

const ADV_SKILL_MD = `---
name: ${ADV_SKILL}
description: Outside-world tools for the adversarial stories; each needs a file:<key> right.
allowed-tools: adv_write adv_read adv_secret_read
---
adv_write writes a key (needs write on file:<key>); adv_read returns it (needs read on file:<key>);
adv_secret_read returns it as classified data (the reader's flow rises to its sensitivity).
`;

const ADV_HIDDEN_SKILL_MD = `---
name: ${ADV_HIDDEN_SKILL}
description: A tool no adversarial agent has in its table (it would join only if this Skill were loaded).
allowed-tools: adv_hidden
---
adv_hidden records that it ran.
`;

/** Everything a base agent has, plus the outside-world tools; every Skill a story needs is active at spawn. */
const ADV_TOOLS = [
  'discover_skills',
  'activate_skill',
  'unload_skill',
  'process_exit',
  'get_current_time',
  'create_memory_namespace',
  'list_memory_namespace',
  'create_memory_object',
  'read_memory_object',
  'append_memory_object',
  'spawn_child_process',
  'fork_child_process',
  'wait_child_process',
  'signal_child_process',
  'send_process_message',
  'receive_process_messages',
  'read_process_messages',
  'ask_human',
  'exec_process',
  'start_object_task',
  'get_object_task',
  'list_object_tasks',
  'wait_object_task',
  'cancel_object_task',
  'list_capabilities',
  'request_permission',
  'delegate_capability',
  'revoke_capability',
  'adv_write',
  'adv_read',
  'adv_secret_read',
];

export interface OutsideWorld {
  /** Keys adv_write wrote, with their text (like files: they survive a rolled-back transaction). */
  readonly files: Map<string, string>;
  /** Every completed run of an outside-world tool: `<tool>:<key>`. */
  readonly runs: string[];
}

export function adversaryPlugin(): { plugin: Plugin; world: OutsideWorld } {
  const world: OutsideWorld = { files: new Map(), runs: [] };
  const key = z.string().regex(/^[a-z0-9][a-z0-9/_-]{0,63}$/);
  const write = defineTool({
    name: 'adv_write',
    description: 'Write text to an outside-world key (needs write on file:<key>).',
    input: z.object({ key, text: z.string().max(200).default('x') }),
    policy: { sideEffects: true },
    async run({ key: k, text }, ctx) {
      await ctx.authority.require(`file:${k}`, 'write');
      world.files.set(k, text);
      world.runs.push(`adv_write:${k}`);
      return { key: k, written: true };
    },
  });
  const read = defineTool({
    name: 'adv_read',
    description: 'Read an outside-world key (needs read on file:<key>).',
    input: z.object({ key }),
    async run({ key: k }, ctx) {
      await ctx.authority.require(`file:${k}`, 'read');
      world.runs.push(`adv_read:${k}`);
      return { key: k, text: world.files.get(k) ?? null };
    },
  });
  // Reads data the host classified (secret unless told otherwise): the caller's flow rises to that sensitivity.
  const secretRead = defineTool({
    name: 'adv_secret_read',
    description: 'Read a classified outside-world key (needs read on file:<key>); the data carries the given sensitivity.',
    input: z.object({ key, sensitivity: z.enum(['confidential', 'restricted', 'secret']).default('secret') }),
    async run({ key: k, sensitivity }, ctx) {
      await ctx.authority.require(`file:${k}`, 'read');
      await ctx.flow.taint({ sensitivity });
      world.runs.push(`adv_secret_read:${k}`);
      return { key: k, text: world.files.get(k) ?? null };
    },
  });
  const hidden = defineTool({
    name: ADV_HIDDEN_TOOL,
    description: 'Defined, but in no image table.',
    input: z.object({}),
    run: () => (world.runs.push(ADV_HIDDEN_TOOL), { ran: true }),
  });
  const plugin = definePlugin({
    name: 'test-adversary-targets',
    version: '0.0.0',
    skills: [skillFromText(ADV_SKILL_MD, ADV_SKILL), skillFromText(ADV_HIDDEN_SKILL_MD, ADV_HIDDEN_SKILL)],
    tools: [write, read, secretRead, hidden],
    images: [
      {
        id: ADV_IMAGE,
        description: 'Base agent tools plus the outside-world tools, every Skill active at spawn.',
        systemPrompt: 'You are a test agent.',
        promptMode: 'libos_default',
        defaultSkills: [
          'agent-libos-skill-navigation',
          'agent-libos-runtime-session',
          'agent-libos-object-memory',
          'agent-libos-child-processes',
          'agent-libos-authority',
          'agent-libos-object-tasks',
          'agent-libos-agent-images',
          ADV_SKILL,
        ],
        defaultTools: ADV_TOOLS,
      },
    ],
  });
  return { plugin, world };
}

/** A clock a story moves by hand. */
export interface TestClock {
  now(): Date;
  advance(ms: number): void;
}

export function testClock(start = Date.parse('2026-03-01T00:00:00.000Z')): TestClock {
  let t = start;
  return { now: () => new Date(t), advance: (ms) => void (t += ms) };
}

/** One HTTP answer: status and body text (parsed as JSON when it is JSON). */
export interface HttpAnswer {
  readonly status: number;
  readonly text: string;
  readonly body: Json;
}

/** The runtime served over HTTP on loopback (REST, SSE, MCP), and clients for it. */
export interface Surfaces {
  readonly server: RunningServer;
  /** One REST request with the bearer token (unless `token` overrides it; `null` sends none). */
  api(
    path: string,
    init?: { method?: string; json?: unknown; token?: string | null; headers?: Record<string, string> },
  ): Promise<HttpAnswer>;
  /** One raw request through node:http, so any header (even `Host`) goes out exactly as given. */
  raw(path: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<HttpAnswer>;
  /** An official MCP SDK client connected to `/mcp/processes/<pid>` (extra headers go on every request). */
  mcp(pid: string, headers?: Record<string, string>): Promise<Client>;
}

export interface World {
  readonly rt: Runtime;
  readonly outside: OutsideWorld;
  readonly clock: TestClock;
  /** Serves the runtime over HTTP (started on first use). */
  surfaces(): Promise<Surfaces>;
  close(): Promise<void>;
}

const answerOf = (status: number, text: string): HttpAnswer => {
  let body: Json = null;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    // Not JSON (a plain-text error page): the caller reads `text`.
  }
  return { status, text, body };
};

async function startSurfaces(rt: Runtime, clients: Client[]): Promise<Surfaces> {
  const server = await serve({ runtime: rt });
  const bearer = { authorization: `Bearer ${server.token}` };
  return {
    server,
    async api(path, init = {}) {
      const headers: Record<string, string> = {
        ...(init.token === null ? {} : { authorization: `Bearer ${init.token ?? server.token}` }),
        ...init.headers,
      };
      const body = init.json === undefined ? undefined : JSON.stringify(init.json);
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${server.url}${path}`, {
        method: init.method ?? (body === undefined ? 'GET' : 'POST'),
        headers,
        ...(body !== undefined ? { body } : {}),
      });
      return answerOf(res.status, await res.text());
    },
    raw(path, init) {
      const url = new URL(path, server.url);
      return new Promise<HttpAnswer>((resolve, reject) => {
        const req = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname + url.search,
            method: init.method,
            headers: { ...bearer, ...init.headers },
            setHost: false,
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve(answerOf(res.statusCode ?? 0, text)));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(init.body);
      });
    },
    async mcp(pid, headers = {}) {
      const client = new Client({ name: 'libos-adversary', version: '0.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/processes/${pid}`), {
        requestInit: { headers: { ...bearer, ...headers } },
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    },
  };
}

/** A fresh in-memory runtime with every standard plugin and the adversary targets. */
export async function openWorld(): Promise<World> {
  const { plugin, world } = adversaryPlugin();
  const clock = testClock();
  const rt = await openRuntime({
    path: ':memory:',
    plugins: [capabilities(), objectMemory(), tasks(), session(), plugin],
    config: { ids: sequentialIds(0), clock },
  });
  const clients: Client[] = [];
  let surfaces: Promise<Surfaces> | undefined;
  return {
    rt,
    outside: world,
    clock,
    surfaces: () => (surfaces ??= startSurfaces(rt, clients)),
    async close() {
      for (const c of clients.splice(0)) await c.close();
      if (surfaces) await (await surfaces).server.close();
      await rt.close();
    },
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** Spawns an adversary-agent root (or a host-side child of `parentPid`). */
export async function agent(
  rt: Runtime,
  goal: string,
  opts: { parentPid?: string; budget?: Record<string, number | null>; image?: string } = {},
): Promise<string> {
  const p = await rt.spawn({
    goal,
    image: opts.image ?? ADV_IMAGE,
    ...(opts.parentPid ? { parentPid: opts.parentPid } : {}),
    ...(opts.budget ? { budget: opts.budget } : {}),
  });
  return p.pid;
}

/** Calls a tool that must succeed and returns its payload. */
export async function ok(rt: Runtime, pid: string, tool: string, args: Record<string, unknown> = {}): Promise<Json> {
  const r = await rt.call(pid, tool, args);
  if (!r.ok) throw new Error(`${tool} as ${pid} failed: ${r.error.code}: ${r.error.message}`);
  return r.payload;
}

/** A model-path child: `spawn_child_process` as `parentPid` (which must hold `process:spawn` write). */
export async function childOf(rt: Runtime, parentPid: string, args: Record<string, unknown> = {}): Promise<string> {
  return (await ok(rt, parentPid, 'spawn_child_process', { goal: 'child work', ...args })).pid;
}

/** The process's flow labels (its high-water mark). */
export async function flowOf(rt: Runtime, pid: string): Promise<{ sensitivity: string; trust_level: string }> {
  return rt.transaction(async (scope) => rt.authority.flow(scope, pid).labels()) as Promise<{ sensitivity: string; trust_level: string }>;
}

/** Durable labels of an Object (null when there is none). */
export async function objectLabels(rt: Runtime, oid: string): Promise<{ sensitivity: string } | null> {
  return rt.transaction(async (scope) => {
    const d = await scope.service<{ describe(oid: string): Promise<{ labels: { sensitivity: string } } | null> }>('objects').describe(oid);
    return d ? d.labels : null;
  });
}

/**
 * Runs the scheduler for `pid` alone: every other runnable process is paused for the run, then resumed (so a story
 * can tell which process's prompt reached the provider).
 */
export async function runOnly(rt: Runtime, pid: string, provider: LlmProvider, maxQuanta = 1): Promise<RunReport> {
  const held: string[] = [];
  for (const p of await rt.processes()) {
    if (p.pid !== pid && p.status === 'runnable') {
      await rt.signal(p.pid, 'pause');
      held.push(p.pid);
    }
  }
  try {
    return await rt.run({ provider, maxQuanta });
  } finally {
    for (const p of held) if ((await rt.process(p)).status === 'paused') await rt.signal(p, 'resume');
  }
}

/** What an attack achieved. `effect`: the protected state changed (read back from the store or the outside world). */
export interface AttackOutcome {
  readonly effect: boolean;
  /** The surface said no (an error envelope, a 4xx, a refusal payload); null when the attack is not a request to refuse. */
  readonly refused: boolean | null;
  readonly note: string;
}

/** Whether the matching legitimate action did what it should (state read back, not just the envelope). */
export interface LegitOutcome {
  readonly ok: boolean;
  readonly note: string;
}

/**
 * One attack story: a setup, the attack, and the legitimate action that matches it. Both run against the same
 * world (attack first unless `legitFirst`), so the attack may not break what the system must still allow.
 */
export interface Story<S = Json> {
  readonly id: string;
  /** The nearest spec acceptance id, e.g. `CAP-25`. */
  readonly spec: string | null;
  readonly area: 'delegation' | 'one-use' | 'revocation' | 'namespaces' | 'budgets' | 'labels' | 'confirmation' | 'tokens' | 'tools';
  readonly title: string;
  readonly legitFirst?: boolean;
  setup(w: World): Promise<S>;
  attack(s: S, w: World): Promise<AttackOutcome>;
  legit(s: S, w: World): Promise<LegitOutcome>;
}

export const story = <S>(s: Story<S>): Story => s as Story;

/** An attack outcome. */
export const attack = (effect: boolean, refused: boolean | null, note: string): AttackOutcome => ({ effect, refused, note });
/** A legitimate outcome. */
export const legit = (okay: boolean, note: string): LegitOutcome => ({ ok: okay, note });

/** A short description of a call's outcome for notes. */
export const describeCall = (r: ToolCallResult): string =>
  r.ok ? `ok ${JSON.stringify(r.payload ?? null).slice(0, 120)}` : `${r.error.code}: ${r.error.message.slice(0, 160)}`;
