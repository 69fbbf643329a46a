// Long file: a table of adversarial stories, one per attack, each reading alone.
import { DEFAULT_SINK_RULES, type SinkRule } from '@libos/capabilities';
import { ScriptedProvider, type LlmProvider, type Runtime } from '@libos/kernel';
import {
  agent,
  attack,
  childOf,
  describeCall,
  flowOf,
  legit,
  objectLabels,
  ok,
  runOnly,
  story,
  type Json,
  type Story,
  type World,
} from './adversarial-harness.js';

/**
 * Label leaks: a process that observed classified data tries to get it out through every sink: the prompt to its
 * model (`llm:*`), a message, a human question or permission request, its exit result, a child's goal, an
 * Object's declared labels, an exec or a fork that would shed its high-water mark, an MCP tool result, and an
 * ObjectTask notification. The data must either be refused at the sink or arrive still carrying its labels.
 */

/** A provider that records which processes' prompts reached it; every turn is one harmless call. */
const recorder = () =>
  new ScriptedProvider({ processes: { '*': [[{ tool: 'list_capabilities', args: {} }], [{ tool: 'list_capabilities', args: {} }]] } });
const promptsFrom = (p: ScriptedProvider, pid: string) => p.requests.filter((r) => r.pid === pid).length;

/** A process that read classified data (its flow is at `sensitivity`). */
async function tainted(
  w: World,
  goal: string,
  sensitivity: 'confidential' | 'secret' = 'secret',
  opts: { parentPid?: string } = {},
): Promise<string> {
  const p = await agent(w.rt, goal, opts);
  await w.rt.grant(p, 'file:vault', ['read']);
  await ok(w.rt, p, 'adv_secret_read', { key: 'vault', sensitivity });
  return p;
}

/** A parent with `process:spawn` and a child spawned through the model's tool while the parent was still clean. */
async function parentWithChild(w: World): Promise<{ p: string; c: string }> {
  const p = await agent(w.rt, 'parent');
  await w.rt.grant(p, 'process:spawn', ['write']);
  return { p, c: await childOf(w.rt, p) };
}

const questionsOf = async (rt: Runtime, pid: string) => (await rt.humanRequests({ pid })).length;
const setRules = (rt: Runtime, rules: readonly SinkRule[]) => rt.transaction((scope) => rt.authority.setSinkRules(scope, 'host', rules));
const textOf = (r: unknown) => JSON.stringify(r);

export const LABEL_STORIES: readonly Story[] = [
  story({
    id: 'ADV-53',
    spec: 'CAP-52',
    area: 'labels',
    title: 'llm:* sink: a secret-tainted process’s prompt never reaches the provider; a clean one’s does',
    setup: async (w) => ({ p: await tainted(w, 'secret reader'), q: await agent(w.rt, 'clean') }),
    async attack({ p }, { rt }) {
      const provider = recorder();
      await runOnly(rt, p, provider);
      const proc = await rt.process(p);
      return attack(
        promptsFrom(provider, p) > 0,
        proc.outcome?.code === 'egress_denied',
        `prompts ${promptsFrom(provider, p)}; ${proc.status} ${JSON.stringify(proc.outcome ?? null)}`,
      );
    },
    async legit({ q }, { rt }) {
      const provider = recorder();
      await runOnly(rt, q, provider);
      return legit(promptsFrom(provider, q) === 1, `prompts ${promptsFrom(provider, q)}`);
    },
  }),
  story({
    id: 'ADV-54',
    spec: 'CAP-55',
    area: 'labels',
    title: 'message sink: secret data sent to a child taints the child; its prompt is then refused',
    setup: async (w) => {
      const f = await parentWithChild(w);
      await w.rt.grant(f.p, 'file:vault', ['read']);
      await ok(w.rt, f.p, 'adv_secret_read', { key: 'vault' });
      const clean = await parentWithChild(w);
      return { f, clean };
    },
    async attack({ f }, { rt }) {
      const sent = await rt.call(f.p, 'send_process_message', { to_pid: f.c, payload: { summary: 'what the vault says' } });
      const got = await rt.call(f.c, 'receive_process_messages', {});
      const provider = recorder();
      await runOnly(rt, f.c, provider);
      const flow = (await flowOf(rt, f.c)).sensitivity;
      return attack(
        promptsFrom(provider, f.c) > 0 || flow !== 'secret',
        promptsFrom(provider, f.c) === 0,
        `send: ${describeCall(sent)}; receive: ${describeCall(got)}; child flow ${flow}`,
      );
    },
    async legit({ clean }, { rt }) {
      const sent = await rt.call(clean.p, 'send_process_message', { to_pid: clean.c, payload: { summary: 'nothing secret' } });
      const got = await rt.call(clean.c, 'receive_process_messages', {});
      const provider = recorder();
      await runOnly(rt, clean.c, provider);
      return legit(
        sent.ok && got.ok && promptsFrom(provider, clean.c) === 1,
        `send: ${describeCall(sent)}; prompts ${promptsFrom(provider, clean.c)}`,
      );
    },
  }),
  story({
    id: 'ADV-55',
    spec: 'CAP-49',
    area: 'labels',
    title: 'llm:* sink: data of two tenants (mixed) never reaches the model; one tenant’s does',
    setup: async (w) => {
      const mixer = async (tenants: string[]) => {
        const p = await agent(w.rt, 'tenant reader');
        for (const [i, tenant] of tenants.entries()) {
          await ok(w.rt, p, 'create_memory_object', { type: 'observation', name: `t${i}`, payload: { row: i }, metadata: { tenant } });
          await ok(w.rt, p, 'read_memory_object', { name: `t${i}` });
        }
        return p;
      };
      return { mixed: await mixer(['acme', 'globex']), single: await mixer(['acme', 'acme']) };
    },
    async attack({ mixed }, { rt }) {
      const provider = recorder();
      await runOnly(rt, mixed, provider);
      const proc = await rt.process(mixed);
      return attack(
        promptsFrom(provider, mixed) > 0,
        proc.outcome?.code === 'egress_denied',
        `prompts ${promptsFrom(provider, mixed)}; tenant ${((await flowOf(rt, mixed)) as Json).tenant}; ${JSON.stringify(proc.outcome)}`,
      );
    },
    async legit({ single }, { rt }) {
      const provider = recorder();
      await runOnly(rt, single, provider);
      return legit(promptsFrom(provider, single) === 1, `prompts ${promptsFrom(provider, single)}`);
    },
  }),
  story({
    id: 'ADV-56',
    spec: 'CAP-52',
    area: 'labels',
    title: 'human sink: ask_human carries secret data to no unregistered human (human:<name>:question)',
    setup: async (w) => {
      const p = await tainted(w, 'secret asker');
      await w.rt.grant(p, 'human:stranger', ['write']);
      await w.rt.grant(p, 'human:owner', ['write']);
      return { p };
    },
    async attack({ p }, { rt }) {
      const r = await rt.call(p, 'ask_human', { question: 'the vault says X; what now?', human: 'stranger' });
      const queued = await questionsOf(rt, p);
      return attack(queued > 0, !r.ok && r.error.code === 'egress_denied', `${describeCall(r)}; queued ${queued}`);
    },
    async legit({ p }, { rt }) {
      const r = await rt.call(p, 'ask_human', { question: 'may I use the vault data?' });
      return legit(r.ok && r.wait?.kind === 'human' && (await questionsOf(rt, p)) === 1, `owner (cleared for secret): ${describeCall(r)}`);
    },
  }),
  story({
    id: 'ADV-57',
    spec: 'CAP-52',
    area: 'labels',
    title: 'human sink: a request_permission reason carries confidential data to no unregistered human',
    setup: async (w) => {
      const p = await tainted(w, 'confidential asker', 'confidential');
      const q = await agent(w.rt, 'clean asker');
      for (const x of [p, q]) await w.rt.grant(x, 'human:stranger', ['write']);
      return { p, q };
    },
    async attack({ p }, { rt }) {
      const r = await rt.call(p, 'request_permission', {
        resource: 'file:docs',
        rights: ['read'],
        reason: 'the vault says X',
        human: 'stranger',
      });
      const queued = await questionsOf(rt, p);
      return attack(queued > 0, !r.ok && r.error.code === 'egress_denied', `${describeCall(r)}; queued ${queued}`);
    },
    async legit({ q }, { rt }) {
      const r = await rt.call(q, 'request_permission', {
        resource: 'file:docs',
        rights: ['read'],
        reason: 'to read the docs',
        human: 'stranger',
      });
      return legit(r.ok && r.wait?.kind === 'human' && (await questionsOf(rt, q)) === 1, describeCall(r));
    },
  }),
  story({
    id: 'ADV-58',
    spec: 'S-E11',
    area: 'labels',
    title: 'exit-result sink: a secret child’s exit summary is secret, so the waiting parent’s prompt is refused',
    setup: async (w) => {
      const f = await parentWithChild(w);
      await w.rt.grant(f.c, 'file:vault', ['read']);
      await ok(w.rt, f.c, 'adv_secret_read', { key: 'vault' });
      return { f, clean: await parentWithChild(w) };
    },
    async attack({ f }, { rt }) {
      const exited = await rt.call(f.c, 'process_exit', { payload: { found: 'the vault text' } });
      const resultOid = exited.ok ? (exited.payload as Json).result_oid : null;
      const waited = await rt.call(f.p, 'wait_child_process', { child_pid: f.c, block: false });
      const labels = resultOid ? await objectLabels(rt, resultOid) : null;
      const provider = recorder();
      await runOnly(rt, f.p, provider);
      const effect = promptsFrom(provider, f.p) > 0 || (labels !== null && labels.sensitivity !== 'secret');
      return attack(
        effect,
        promptsFrom(provider, f.p) === 0,
        `exit: ${describeCall(exited)}; summary ${JSON.stringify(labels)}; ${describeCall(waited)}; prompts ${promptsFrom(provider, f.p)}`,
      );
    },
    async legit({ clean }, { rt }) {
      const exited = await rt.call(clean.c, 'process_exit', { payload: { found: 'public facts' } });
      const waited = await rt.call(clean.p, 'wait_child_process', { child_pid: clean.c, block: false });
      const provider = recorder();
      await runOnly(rt, clean.p, provider);
      return legit(
        exited.ok && waited.ok && promptsFrom(provider, clean.p) === 1,
        `exit: ${describeCall(exited)}; parent prompts ${promptsFrom(provider, clean.p)}`,
      );
    },
  }),
  story({
    id: 'ADV-59',
    spec: 'CAP-52',
    area: 'labels',
    title: 'exit-result sink: with process:* cleared only to confidential, a secret child cannot exit a result to its parent',
    setup: async (w) => {
      await setRules(
        w.rt,
        DEFAULT_SINK_RULES.map((r) => (r.pattern === 'process:*' ? { ...r, maxSensitivity: 'confidential' as const } : r)),
      );
      const f = await parentWithChild(w);
      await w.rt.grant(f.c, 'file:vault', ['read']);
      await ok(w.rt, f.c, 'adv_secret_read', { key: 'vault' });
      return { f, clean: await parentWithChild(w) };
    },
    async attack({ f }, { rt }) {
      const r = await rt.call(f.c, 'process_exit', { payload: { found: 'the vault text' } });
      const status = (await rt.process(f.c)).status;
      return attack(status !== 'runnable', !r.ok && r.error.code === 'egress_denied', `${describeCall(r)}; child ${status}`);
    },
    async legit({ clean }, { rt }) {
      const r = await rt.call(clean.c, 'process_exit', { payload: { found: 'public facts' } });
      return legit(r.ok && (await rt.process(clean.c)).status === 'exited', describeCall(r));
    },
  }),
  story({
    id: 'ADV-60',
    spec: 'CAP-55',
    area: 'labels',
    title: 'goal sink: a child spawned by a secret parent starts secret (its goal derives from what the parent saw)',
    setup: async (w) => {
      const p = await tainted(w, 'secret parent');
      const q = await agent(w.rt, 'clean parent');
      for (const x of [p, q]) await w.rt.grant(x, 'process:spawn', ['write']);
      return { p, q };
    },
    async attack({ p }, { rt }) {
      const c = await childOf(rt, p, { goal: 'tell the stranger: the vault says X' });
      await rt.grant(c, 'human:stranger', ['write']);
      const r = await rt.call(c, 'ask_human', { question: 'the vault says X', human: 'stranger' });
      const flow = (await flowOf(rt, c)).sensitivity;
      return attack((await questionsOf(rt, c)) > 0 || flow !== 'secret', !r.ok, `child flow ${flow}; ask: ${describeCall(r)}`);
    },
    async legit({ q }, { rt }) {
      const c = await childOf(rt, q, { goal: 'ask the stranger the way' });
      await rt.grant(c, 'human:stranger', ['write']);
      const r = await rt.call(c, 'ask_human', { question: 'which way?', human: 'stranger' });
      return legit(r.ok && (await questionsOf(rt, c)) === 1, describeCall(r));
    },
  }),
  story({
    id: 'ADV-61',
    spec: 'OM-32',
    area: 'labels',
    title: 'Object sink: declared metadata never lowers sensitivity nor raises trust',
    setup: async (w) => ({ p: await tainted(w, 'secret writer') }),
    async attack({ p }, { rt }) {
      const low = await rt.call(p, 'create_memory_object', {
        type: 'summary',
        name: 'public-summary',
        payload: { text: 'vault' },
        metadata: { sensitivity: 'public' },
      });
      const trusted = await rt.call(p, 'create_memory_object', {
        type: 'claim',
        name: 'trusted-claim',
        payload: 1,
        metadata: { trust_level: 'trusted' },
      });
      const labels = low.ok ? await objectLabels(rt, (low.payload as Json).oid) : null;
      return attack(
        (labels !== null && labels.sensitivity !== 'secret') || trusted.ok,
        !trusted.ok,
        `lowered: ${JSON.stringify(labels)}; trust: ${describeCall(trusted)}`,
      );
    },
    async legit({ p }, { rt }) {
      const r = await rt.call(p, 'create_memory_object', { type: 'summary', name: 'notes', payload: { text: 'vault' } });
      const labels = r.ok ? await objectLabels(rt, (r.payload as Json).oid) : null;
      return legit(r.ok && labels?.sensitivity === 'secret', `${describeCall(r)}; ${JSON.stringify(labels)}`);
    },
  }),
  story({
    id: 'ADV-62',
    spec: 'CAP-55',
    area: 'labels',
    title: 'the high-water mark survives exec: an exec does not launder a secret process clean',
    setup: async (w) => ({ p: await tainted(w, 'secret exec') }),
    async attack({ p }, { rt }) {
      const r = await rt.call(p, 'exec_process', { image: 'adversary-agent:v0', goal: 'a fresh start', preserve_capabilities: true });
      const flow = (await flowOf(rt, p)).sensitivity;
      return attack(flow !== 'secret', null, `exec: ${describeCall(r)}; flow ${flow}`);
    },
    async legit({ p }, { rt }) {
      const proc = await rt.process(p);
      return legit(proc.goal === 'a fresh start' && proc.status === 'runnable', `goal ${JSON.stringify(proc.goal)}, ${proc.status}`);
    },
  }),
  story({
    id: 'ADV-63',
    spec: 'CAP-55',
    area: 'labels',
    title: 'the high-water mark survives fork: a forked worker of a secret process starts secret',
    setup: async (w) => {
      const p = await tainted(w, 'secret fork');
      const q = await agent(w.rt, 'clean fork');
      for (const x of [p, q]) await w.rt.grant(x, 'process:spawn', ['write']);
      return { p, q };
    },
    async attack({ p }, { rt }) {
      const r = await rt.call(p, 'fork_child_process', { goal: 'summarize for the model' });
      const worker = r.ok ? (r.payload as Json).pid : null;
      if (!worker) return attack(false, true, `fork refused: ${describeCall(r)}`);
      const provider = recorder();
      await runOnly(rt, worker, provider);
      const flow = (await flowOf(rt, worker)).sensitivity;
      return attack(
        flow !== 'secret' || promptsFrom(provider, worker) > 0,
        promptsFrom(provider, worker) === 0,
        `worker flow ${flow}; prompts ${promptsFrom(provider, worker)}`,
      );
    },
    async legit({ q }, { rt }) {
      const r = await rt.call(q, 'fork_child_process', { goal: 'work' });
      const worker = r.ok ? (r.payload as Json).pid : '';
      const provider = recorder();
      if (worker) await runOnly(rt, worker, provider);
      return legit(r.ok && promptsFrom(provider, worker) === 1, describeCall(r));
    },
  }),
  story({
    id: 'ADV-64',
    spec: 'CAP-52',
    area: 'labels',
    title: 'MCP sink: a tools/call result never hands secret Object content to the MCP client',
    setup: async (w) => {
      const p = await agent(w.rt, 'secret holder');
      const vault = { type: 'observation', name: 'vault', payload: { text: 'SECRET-7c1e' }, metadata: { sensitivity: 'secret' } };
      await ok(w.rt, p, 'create_memory_object', vault);
      const q = await agent(w.rt, 'plain holder');
      await ok(w.rt, q, 'create_memory_object', { type: 'observation', name: 'plain', payload: { text: 'PLAIN-52aa' } });
      return { p, q, http: await w.surfaces() };
    },
    async attack({ p, http }) {
      const client = await http.mcp(p);
      const r = await client.callTool({ name: 'read_memory_object', arguments: { name: 'vault' } });
      return attack(textOf(r).includes('SECRET-7c1e'), r.isError === true, textOf(r).slice(0, 200));
    },
    async legit({ q, http }) {
      const client = await http.mcp(q);
      const r = await client.callTool({ name: 'read_memory_object', arguments: { name: 'plain' } });
      return legit(!r.isError && textOf(r).includes('PLAIN-52aa'), textOf(r).slice(0, 200));
    },
  }),
  story({
    id: 'ADV-65',
    spec: 'OT-65',
    area: 'labels',
    title: 'task-notification sink: a confidential creator’s task result is not notified to a child cleared only for normal',
    setup: async (w) => {
      /** A creator (paused: only its runner works) with an owner Object and a child cleared for normal data. */
      const creator = async (sensitivity: 'confidential' | null) => {
        const p = sensitivity ? await tainted(w, 'creator', sensitivity) : await agent(w.rt, 'clean creator');
        await w.rt.grant(p, 'process:spawn', ['write']);
        const owner = (
          await ok(w.rt, p, 'create_memory_object', { type: 'plan', name: 'owner', payload: { entries: [] }, immutable: false })
        ).oid as string;
        const d = await childOf(w.rt, p, { goal: 'listen' });
        const rules = (await w.rt.transaction((scope) => w.rt.authority.sinkRules(scope))).rules;
        await setRules(w.rt, [
          ...rules,
          { pattern: `process:${d}`, trustLevel: 'trusted', maxSensitivity: 'normal', tenants: '*', principals: '*' },
        ]);
        return { p, owner, d };
      };
      return { hot: await creator('confidential'), cold: await creator(null) };
    },
    async attack({ hot, cold }, w) {
      const r = await w.rt.call(hot.p, 'start_object_task', {
        owner_oid: hot.owner,
        tool: 'list_capabilities',
        args: {},
        notify_pid: hot.d,
      });
      const task = r.ok ? (r.payload as Json).task.task_id : null;
      await driveRunners(w, [hot.p, hot.d, cold.p, cold.d]);
      const got = (await w.rt.messages(hot.d)).filter((m) => m.correlationId === task);
      const info = task ? await w.rt.call(hot.p, 'get_object_task', { task_id: task }) : r;
      return attack(
        got.length > 0,
        task !== null && got.length === 0,
        `start: ${describeCall(r)}; task: ${describeCall(info)}; delivered ${got.length}`,
      );
    },
    async legit({ hot, cold }, w) {
      const r = await w.rt.call(cold.p, 'start_object_task', {
        owner_oid: cold.owner,
        tool: 'list_capabilities',
        args: {},
        notify_pid: cold.d,
      });
      const task = r.ok ? (r.payload as Json).task.task_id : null;
      await driveRunners(w, [hot.p, hot.d, cold.p, cold.d]);
      const got = (await w.rt.messages(cold.d)).filter((m) => m.correlationId === task);
      return legit(got.length === 1, `start: ${describeCall(r)}; delivered ${got.length}`);
    },
  }),
];

/** A provider that never answers with a tool call: model-driven processes idle while ObjectTask runners work. */
const idle: LlmProvider = {
  name: 'idle',
  model: 'idle',
  completeAction: async () => ({
    content: null,
    toolCalls: [],
    api: 'idle',
    model: 'idle',
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  }),
};

/** Runs ObjectTask runners to completion while the model-driven processes `hold` are paused (only runners work). */
async function driveRunners(w: World, hold: readonly string[]): Promise<void> {
  const held: string[] = [];
  for (const p of await w.rt.processes()) {
    if (hold.includes(p.pid) && p.status === 'runnable') {
      await w.rt.signal(p.pid, 'pause');
      held.push(p.pid);
    }
  }
  await w.rt.run({ provider: idle, maxQuanta: 24, maxEmptyReplies: Number.POSITIVE_INFINITY });
  for (const p of held) if ((await w.rt.process(p)).status === 'paused') await w.rt.signal(p, 'resume');
}
