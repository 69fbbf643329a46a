// Long file: a table of adversarial stories, one per attack, each reading alone.
import { ScriptedProvider, type Runtime, type ToolCallResult } from '@libos/kernel';
import { agent, attack, childOf, describeCall, legit, ok, story, type Json, type Story, type World } from './adversarial-harness.js';

/**
 * Attacks across boundaries: another process's namespaces and Objects (reads, writes, lists, laundering an Object
 * out as an exit result or a task owner), and budgets that a child tries to spend past an ancestor's envelope.
 */

const MARKER = 'MARKER-diary-7f3a';

/** P owns namespace `proj` with a mutable ledger and a `diary` in its own scope; Q is an unrelated process. */
async function neighbours(w: World) {
  const p = await agent(w.rt, 'owner');
  const q = await agent(w.rt, 'neighbour');
  await ok(w.rt, p, 'create_memory_object', { type: 'observation', name: 'diary', payload: { text: MARKER } });
  await ok(w.rt, p, 'create_memory_namespace', { namespace: 'proj' });
  const ledger = await ok(w.rt, p, 'create_memory_object', {
    type: 'plan',
    namespace: 'proj',
    name: 'ledger',
    payload: { entries: [] },
    immutable: false,
  });
  return { p, q, ledger: ledger.oid as string };
}

const leaks = (r: ToolCallResult) => JSON.stringify(r).includes(MARKER);
const names = (r: ToolCallResult): string[] =>
  r.ok
    ? [
        ...(r.payload as Json).objects.map((o: { name: string }) => o.name),
        ...(r.payload as Json).namespaces.map((n: { namespace: string }) => n.namespace),
      ]
    : [];
/** The ledger as its owner reads it: version and entries. */
const ledgerOf = async (rt: Runtime, p: string) => {
  const r = await ok(rt, p, 'read_memory_object', { namespace: 'proj', name: 'ledger' });
  return { version: r.version as number, entries: r.payload.entries as unknown[] };
};

const namespaces: Story[] = [
  story({
    id: 'ADV-33',
    spec: 'OM-47',
    area: 'namespaces',
    title: 'a stranger cannot read (or even confirm) an Object in another process’s scope',
    setup: neighbours,
    async attack({ p, q }, { rt }) {
      const byName = await rt.call(q, 'read_memory_object', { namespace: `process:${p}`, name: 'diary' });
      const listed = await rt.call(q, 'list_memory_namespace', { namespace: `process:${p}` });
      return attack(
        leaks(byName) || leaks(listed) || names(listed).includes('diary'),
        !byName.ok && !listed.ok,
        `read: ${describeCall(byName)}; list: ${describeCall(listed)}`,
      );
    },
    async legit({ p }, { rt }) {
      const r = await rt.call(p, 'read_memory_object', { name: 'diary' });
      return legit(r.ok && leaks(r), describeCall(r));
    },
  }),
  story({
    id: 'ADV-34',
    spec: 'OM-47',
    area: 'namespaces',
    title: 'a child is not its parent: it cannot read the parent’s scope without rights on it',
    setup: async (w) => {
      const n = await neighbours(w);
      await w.rt.grant(n.p, 'process:spawn', ['write']);
      const c = await childOf(w.rt, n.p);
      return { ...n, c };
    },
    async attack({ p, c }, { rt }) {
      const r = await rt.call(c, 'read_memory_object', { namespace: `process:${p}`, name: 'diary' });
      return attack(leaks(r), !r.ok, describeCall(r));
    },
    async legit({ p, c }, { rt }) {
      const diary = await ok(rt, p, 'read_memory_object', { name: 'diary' });
      await rt.grant(c, `object_namespace:process:${p}`, ['read']);
      await rt.grant(c, `object:${diary.oid}`, ['read']);
      const r = await rt.call(c, 'read_memory_object', { namespace: `process:${p}`, name: 'diary' });
      return legit(r.ok && leaks(r), `with namespace and Object read: ${describeCall(r)}`);
    },
  }),
  story({
    id: 'ADV-35',
    spec: 'OM-57',
    area: 'namespaces',
    title: 'a neighbour with namespace read cannot append to the owner’s mutable ledger',
    setup: async (w) => {
      const n = await neighbours(w);
      await w.rt.grant(n.q, 'object_namespace:proj', ['read']);
      await w.rt.grant(n.q, `object:${n.ledger}`, ['read']);
      return n;
    },
    async attack({ p, q }, { rt }) {
      const r = await rt.call(q, 'append_memory_object', { namespace: 'proj', name: 'ledger', entry: { from: 'intruder' } });
      const l = await ledgerOf(rt, p);
      return attack(l.version !== 1 || l.entries.length > 0, !r.ok, `${describeCall(r)}; ledger v${l.version}`);
    },
    async legit({ p }, { rt }) {
      const r = await rt.call(p, 'append_memory_object', { namespace: 'proj', name: 'ledger', entry: { from: 'owner' } });
      const l = await ledgerOf(rt, p);
      return legit(r.ok && l.version === 2 && l.entries.length === 1, describeCall(r));
    },
  }),
  story({
    id: 'ADV-36',
    spec: 'OM-5',
    area: 'namespaces',
    title: 'a neighbour cannot plant an Object in the owner’s namespace',
    setup: neighbours,
    async attack({ p, q }, { rt }) {
      const r = await rt.call(q, 'create_memory_object', {
        type: 'observation',
        namespace: 'proj',
        name: 'planted',
        payload: { trust: 'me' },
      });
      const seen = names(await rt.call(p, 'list_memory_namespace', { namespace: 'proj' }));
      return attack(seen.includes('planted'), !r.ok, describeCall(r));
    },
    async legit({ p }, { rt }) {
      const r = await rt.call(p, 'create_memory_object', { type: 'observation', namespace: 'proj', name: 'mine', payload: 1 });
      return legit(r.ok && names(await rt.call(p, 'list_memory_namespace', { namespace: 'proj' })).includes('mine'), describeCall(r));
    },
  }),
  story({
    id: 'ADV-37',
    spec: 'OM-84',
    area: 'namespaces',
    title: 'a neighbour cannot create a child namespace under the owner’s',
    setup: neighbours,
    async attack({ p, q }, { rt }) {
      const r = await rt.call(q, 'create_memory_namespace', { namespace: 'proj/q' });
      const seen = names(await rt.call(p, 'list_memory_namespace', { namespace: 'proj' }));
      return attack(seen.includes('proj/q'), !r.ok, describeCall(r));
    },
    async legit({ p }, { rt }) {
      const r = await rt.call(p, 'create_memory_namespace', { namespace: 'proj/r' });
      return legit(r.ok && names(await rt.call(p, 'list_memory_namespace', { namespace: 'proj' })).includes('proj/r'), describeCall(r));
    },
  }),
  story({
    id: 'ADV-38',
    spec: 'OM-17',
    area: 'namespaces',
    title: 'a neighbour cannot list the owner’s namespace',
    setup: neighbours,
    async attack({ q }, { rt }) {
      const r = await rt.call(q, 'list_memory_namespace', { namespace: 'proj' });
      return attack(names(r).includes('ledger'), !r.ok, describeCall(r));
    },
    async legit({ p }, { rt }) {
      const r = await rt.call(p, 'list_memory_namespace', { namespace: 'proj' });
      return legit(names(r).includes('ledger'), describeCall(r));
    },
  }),
  story({
    id: 'ADV-39',
    spec: 'S-E5',
    area: 'namespaces',
    title: 'a child cannot launder another process’s Object out as its exit result (the parent would get a handle)',
    setup: async (w) => {
      const n = await neighbours(w);
      await w.rt.grant(n.p, 'process:spawn', ['write']);
      const c = await childOf(w.rt, n.p);
      const own = await ok(w.rt, c, 'create_memory_object', { type: 'summary', name: 'report', payload: { done: true } });
      const diary = await ok(w.rt, n.p, 'read_memory_object', { name: 'diary' });
      return { ...n, c, own: own.oid as string, diary: diary.oid as string };
    },
    async attack({ q, diary }, w) {
      // The neighbour q asks its own child to exit with the owner's diary as the result.
      await w.rt.grant(q, 'process:spawn', ['write']);
      const mule = await childOf(w.rt, q);
      const r = await w.rt.call(mule, 'process_exit', { result_oid: diary });
      const after = await w.rt.call(q, 'wait_child_process', { child_pid: mule, block: false });
      const handle = await w.rt.transaction(async (scope) => (await w.rt.authority.authorize(scope, q, `object:${diary}`, 'read')).allowed);
      const exited = (await w.rt.process(mule)).status === 'exited';
      return attack(exited || handle, !r.ok, `exit: ${describeCall(r)}; wait: ${describeCall(after)}; parent read handle: ${handle}`);
    },
    async legit({ p, c, own }, { rt }) {
      const r = await rt.call(c, 'process_exit', { result_oid: own });
      const waited = await rt.call(p, 'wait_child_process', { child_pid: c, block: false });
      const handle = await rt.transaction(async (scope) => (await rt.authority.authorize(scope, p, `object:${own}`, 'read')).allowed);
      return legit(
        r.ok && waited.ok && (waited.payload as Json).result_oid === own && handle,
        `exit: ${describeCall(r)}; wait: ${describeCall(waited)}`,
      );
    },
  }),
  story({
    id: 'ADV-40',
    spec: 'OT-4',
    area: 'namespaces',
    title: 'an ObjectTask cannot be started on another process’s Object as its owner',
    setup: async (w) => {
      const n = await neighbours(w);
      await w.rt.grant(n.q, 'process:spawn', ['write']);
      const mine = await ok(w.rt, n.q, 'create_memory_object', {
        type: 'plan',
        name: 'q-owner',
        payload: { entries: [] },
        immutable: false,
      });
      return { ...n, mine: mine.oid as string };
    },
    async attack({ q, ledger }, { rt }) {
      const before = (await rt.processes()).length;
      const r = await rt.call(q, 'start_object_task', { owner_oid: ledger, tool: 'list_capabilities', args: {} });
      return attack((await rt.processes()).length > before, !r.ok, describeCall(r));
    },
    async legit({ q, mine }, { rt }) {
      const r = await rt.call(q, 'start_object_task', { owner_oid: mine, tool: 'list_capabilities', args: {} });
      return legit(r.ok && (r.payload as Json).task.owner_oid === mine, describeCall(r));
    },
  }),
  story({
    id: 'ADV-41',
    spec: 'OT-63',
    area: 'delegation',
    title: 'an ObjectTask runner cannot inherit more than the creator’s delegable grant covers; no runner is made',
    setup: async (w) => {
      const p = await agent(w.rt, 'creator');
      await w.rt.grant(p, 'process:spawn', ['write']);
      await w.rt.grant(p, 'file:src/*', ['read'], { delegable: true });
      const owner = await ok(w.rt, p, 'create_memory_object', { type: 'plan', name: 'owner', payload: { entries: [] }, immutable: false });
      return { p, owner: owner.oid as string };
    },
    async attack({ p, owner }, { rt }) {
      const before = (await rt.processes()).length;
      const r = await rt.call(p, 'start_object_task', {
        owner_oid: owner,
        tool: 'adv_read',
        args: { key: 'etc/passwd' },
        inherit_capabilities: [{ resource: 'file:*', rights: ['read'] }],
      });
      return attack((await rt.processes()).length > before, !r.ok, describeCall(r));
    },
    async legit({ p, owner }, { rt }) {
      const r = await rt.call(p, 'start_object_task', {
        owner_oid: owner,
        tool: 'adv_read',
        args: { key: 'src/a' },
        inherit_capabilities: [{ resource: 'file:src/a', rights: ['read'] }],
      });
      const runner = r.ok ? (r.payload as Json).task.runner_pid : null;
      const held = runner ? (await rt.capabilities(runner)).some((c) => c.resource === 'file:src/a') : false;
      return legit(r.ok && held, `${describeCall(r)}; runner holds file:src/a: ${held}`);
    },
  }),
  story({
    id: 'ADV-42',
    spec: 'OT-5',
    area: 'tools',
    title: 'an ObjectTask cannot run a tool outside its creator’s table',
    setup: async (w) => {
      const p = await agent(w.rt, 'creator');
      await w.rt.grant(p, 'process:spawn', ['write']);
      const owner = await ok(w.rt, p, 'create_memory_object', { type: 'plan', name: 'owner', payload: { entries: [] }, immutable: false });
      return { p, owner: owner.oid as string };
    },
    async attack({ p, owner }, { rt, outside }) {
      const before = (await rt.processes()).length;
      const r = await rt.call(p, 'start_object_task', { owner_oid: owner, tool: 'adv_hidden', args: {} });
      return attack((await rt.processes()).length > before || outside.runs.includes('adv_hidden'), !r.ok, describeCall(r));
    },
    async legit({ p, owner }, { rt }) {
      const r = await rt.call(p, 'start_object_task', { owner_oid: owner, tool: 'list_capabilities', args: {} });
      return legit(r.ok && (r.payload as Json).task.runner_pid !== null, describeCall(r));
    },
  }),
  story({
    id: 'ADV-43',
    spec: 'OT-40',
    area: 'namespaces',
    title: 'a stranger cannot see or cancel another process’s ObjectTask; its creator can',
    setup: async (w) => {
      const p = await agent(w.rt, 'creator');
      const q = await agent(w.rt, 'stranger');
      await w.rt.grant(p, 'process:spawn', ['write']);
      const owner = await ok(w.rt, p, 'create_memory_object', { type: 'plan', name: 'owner', payload: { entries: [] }, immutable: false });
      const t = await ok(w.rt, p, 'start_object_task', { owner_oid: owner.oid, tool: 'list_capabilities', args: {} });
      return { p, q, task: t.task.task_id as string };
    },
    async attack({ p, q, task }, { rt }) {
      const seen = await rt.call(q, 'get_object_task', { task_id: task });
      const cancel = await rt.call(q, 'cancel_object_task', { task_id: task });
      const status = (await ok(rt, p, 'get_object_task', { task_id: task })).task.status;
      return attack(
        status === 'cancelled' || seen.ok,
        !seen.ok && !cancel.ok,
        `get: ${describeCall(seen)}; cancel: ${describeCall(cancel)}; task ${status}`,
      );
    },
    async legit({ p, task }, { rt }) {
      const r = await rt.call(p, 'cancel_object_task', { task_id: task, reason: 'changed my mind' });
      return legit(r.ok && (r.payload as Json).task.status === 'cancelled', describeCall(r));
    },
  }),
  story({
    id: 'ADV-44',
    spec: 'OT-58',
    area: 'namespaces',
    title: 'waiting on another process’s child yields no handle on its result',
    setup: async (w) => {
      const p = await agent(w.rt, 'parent');
      const q = await agent(w.rt, 'stranger');
      await w.rt.grant(p, 'process:spawn', ['write']);
      const c = await childOf(w.rt, p);
      const made = await ok(w.rt, c, 'create_memory_object', { type: 'summary', name: 'report', payload: { v: 1 } });
      await ok(w.rt, c, 'process_exit', { result_oid: made.oid });
      return { p, q, c, result: made.oid as string };
    },
    async attack({ q, c, result }, { rt }) {
      const r = await rt.call(q, 'wait_child_process', { child_pid: c, block: false });
      const handle = await rt.transaction(async (scope) => (await rt.authority.authorize(scope, q, `object:${result}`, 'read')).allowed);
      return attack(handle || JSON.stringify(r).includes(result), !r.ok, `${describeCall(r)}; stranger read handle: ${handle}`);
    },
    async legit({ p, c, result }, { rt }) {
      const r = await rt.call(p, 'wait_child_process', { child_pid: c, block: false });
      const handle = await rt.transaction(async (scope) => (await rt.authority.authorize(scope, p, `object:${result}`, 'read')).allowed);
      return legit(r.ok && handle, describeCall(r));
    },
  }),
  story({
    id: 'ADV-45',
    spec: 'CAP-14',
    area: 'delegation',
    title: 'an exit result does not turn a child’s one-use read of a foreign Object into an unlimited handle for its parent',
    setup: async (w) => {
      const q = await agent(w.rt, 'victim');
      const foreign = await ok(w.rt, q, 'create_memory_object', { type: 'observation', name: 'private', payload: { text: 'Q-PRIVATE' } });
      const p = await agent(w.rt, 'parent');
      await w.rt.grant(p, 'process:spawn', ['write']);
      const c = await childOf(w.rt, p);
      await w.rt.grant(c, `object:${foreign.oid}`, ['read'], { uses: 1 });
      const c2 = await childOf(w.rt, p);
      const own = await ok(w.rt, c2, 'create_memory_object', { type: 'summary', name: 'report', payload: { v: 1 } });
      return { p, c, foreign: foreign.oid as string, c2, own: own.oid as string };
    },
    async attack({ p, c, foreign }, { rt }) {
      const exited = await rt.call(c, 'process_exit', { result_oid: foreign });
      const waited = await rt.call(p, 'wait_child_process', { child_pid: c, block: false });
      const unlimited = (await rt.capabilities(p)).filter(
        (g) =>
          g.resource === `object:${foreign}` && g.usesRemaining === null && (g.rights.includes('read') || g.rights.includes('materialize')),
      );
      const held = unlimited.map((g) => `${g.id} [${g.rights.join(',')}]`).join(' ') || 'none';
      const live = (await rt.process(c)).status === 'runnable';
      return attack(
        unlimited.length > 0,
        !exited.ok && exited.error.code === 'delegation_denied' && live,
        `exit: ${describeCall(exited)}; wait: ${describeCall(waited)}; parent's unlimited grants on it: ${held}`,
      );
    },
    async legit({ p, c2, own }, { rt }) {
      const exited = await rt.call(c2, 'process_exit', { result_oid: own });
      const waited = await rt.call(p, 'wait_child_process', { child_pid: c2, block: false });
      const handle = await rt.transaction(async (scope) => (await rt.authority.authorize(scope, p, `object:${own}`, 'read')).allowed);
      return legit(exited.ok && waited.ok && handle, `exit own result: ${describeCall(exited)}; parent read handle ${handle}`);
    },
  }),
  story({
    id: 'ADV-46',
    spec: 'OT-52',
    area: 'namespaces',
    title: 'a process messages only itself, its parent or its direct children: never a stranger or a grandparent',
    setup: async (w) => {
      const p = await agent(w.rt, 'grandparent');
      await w.rt.grant(p, 'process:spawn', ['write']);
      const c = await childOf(w.rt, p);
      await w.rt.grant(c, 'process:spawn', ['write']);
      const g = await childOf(w.rt, c);
      return { p, c, g, q: await agent(w.rt, 'stranger') };
    },
    async attack({ p, g, q }, { rt }) {
      const toGrandparent = await rt.call(g, 'send_process_message', { to_pid: p, payload: { note: 'skip the middle' } });
      const toStranger = await rt.call(g, 'send_process_message', { to_pid: q, payload: { note: 'hello stranger' } });
      const posted = (await rt.messages(p)).length + (await rt.messages(q)).length;
      return attack(posted > 0, !toGrandparent.ok && !toStranger.ok, `${describeCall(toGrandparent)} | ${describeCall(toStranger)}`);
    },
    async legit({ c, g }, { rt }) {
      const r = await rt.call(g, 'send_process_message', { to_pid: c, payload: { note: 'to my parent' } });
      return legit(r.ok && (await rt.messages(c)).length === 1, describeCall(r));
    },
  }),
];

const budgets: Story[] = [
  story({
    id: 'ADV-47',
    spec: 'K-4',
    area: 'budgets',
    title: 'a child cannot be given more budget than its parent has left',
    setup: async (w) => {
      const p = await agent(w.rt, 'parent', { budget: { tool_calls: 10 } });
      await w.rt.grant(p, 'process:spawn', ['write']);
      return { p };
    },
    async attack({ p }, { rt }) {
      const before = (await rt.processes()).length;
      const r = await rt.call(p, 'spawn_child_process', { goal: 'rich child', budget: { tool_calls: 50 } });
      return attack((await rt.processes()).length > before, !r.ok, describeCall(r));
    },
    async legit({ p }, { rt }) {
      const r = await rt.call(p, 'spawn_child_process', { goal: 'modest child', budget: { tool_calls: 3 } });
      const child = r.ok ? (r.payload as Json).pid : null;
      return legit(r.ok && (await rt.budget(child)).limits.tool_calls === 3, describeCall(r));
    },
  }),
  story({
    id: 'ADV-48',
    spec: 'CAP-43',
    area: 'budgets',
    title: 'a child without a limit of its own still cannot spend past its root’s envelope',
    legitFirst: true,
    setup: async (w) => {
      const root = await agent(w.rt, 'root', { budget: { tool_calls: 6 } });
      const c = await agent(w.rt, 'unlimited child', { parentPid: root, budget: { tool_calls: null } });
      await w.rt.grant(c, 'file:spend/*', ['write']);
      return { root, c };
    },
    async legit({ c }, { rt, outside }) {
      const r = await rt.call(c, 'adv_write', { key: 'spend/0' });
      return legit(r.ok && outside.files.has('spend/0'), describeCall(r));
    },
    async attack({ root, c }, { rt, outside }) {
      const codes = [];
      for (let i = 1; i <= 10; i++) codes.push((await rt.call(c, 'adv_write', { key: `spend/${i}` })).ok ? 'o' : 'x');
      const writes = [...outside.files.keys()].filter((k) => k.startsWith('spend/')).length;
      const used = (await rt.budget(root)).usage.tool_calls ?? 0;
      return attack(
        writes > 6 || used > 6,
        codes.includes('x'),
        `writes ${writes} (root envelope 6); root used ${used}; ${codes.join('')}`,
      );
    },
  }),
  story({
    id: 'ADV-49',
    spec: 'CAP-45',
    area: 'budgets',
    title: 'siblings cannot overcommit the parent: the first child’s envelope is held',
    setup: async (w) => {
      const p = await agent(w.rt, 'parent', { budget: { tool_calls: 10 } });
      await w.rt.grant(p, 'process:spawn', ['write']);
      const a = await ok(w.rt, p, 'spawn_child_process', { goal: 'first', budget: { tool_calls: 6 } });
      return { p, a: a.pid as string };
    },
    async attack({ p }, { rt }) {
      const before = (await rt.processes()).length;
      const r = await rt.call(p, 'spawn_child_process', { goal: 'second', budget: { tool_calls: 6 } });
      return attack(
        (await rt.processes()).length > before,
        !r.ok,
        `${describeCall(r)}; parent remaining ${(await rt.budget(p)).remaining.tool_calls}`,
      );
    },
    async legit({ p }, { rt }) {
      const r = await rt.call(p, 'spawn_child_process', { goal: 'small second', budget: { tool_calls: 1 } });
      return legit(r.ok, describeCall(r));
    },
  }),
  story({
    id: 'ADV-50',
    spec: 'CAP-46',
    area: 'budgets',
    title: 'the child-process limit holds at the root, and a child cannot spawn around it',
    legitFirst: true,
    setup: async (w) => {
      const root = await agent(w.rt, 'root', { budget: { child_processes: 1 } });
      await w.rt.grant(root, 'process:spawn', ['write']);
      return { root, first: '' };
    },
    async legit(s, { rt }) {
      const r = await rt.call(s.root, 'spawn_child_process', { goal: 'the one child' });
      if (r.ok) {
        s.first = (r.payload as Json).pid;
        await rt.grant(s.first, 'process:spawn', ['write']);
      }
      return legit(r.ok, describeCall(r));
    },
    async attack({ root, first }, { rt }) {
      const before = (await rt.processes()).length;
      const second = await rt.call(root, 'spawn_child_process', { goal: 'a second child' });
      const grand = first ? await rt.call(first, 'spawn_child_process', { goal: 'a grandchild' }) : second;
      return attack(
        (await rt.processes()).length > before,
        !second.ok && !grand.ok,
        `second: ${describeCall(second)}; grandchild: ${describeCall(grand)}`,
      );
    },
  }),
  story({
    id: 'ADV-51',
    spec: 'CAP-44',
    area: 'budgets',
    title: 'model calls of a child without an llm limit stop at the root’s llm_calls envelope',
    setup: async (w) => {
      const root = await agent(w.rt, 'root', { budget: { llm_calls: 2 } });
      await w.rt.signal(root, 'pause');
      const c = await agent(w.rt, 'chatty child', { parentPid: root, budget: { llm_calls: null } });
      await w.rt.grant(c, 'file:x', ['read']);
      const turn = [{ tool: 'adv_read', args: { key: 'x' } }];
      return { root, c, provider: new ScriptedProvider({ processes: { [c]: [turn, turn, turn, turn, turn] } }), report: null as Json };
    },
    async legit(s, { rt }) {
      s.report = await rt.run({ provider: s.provider, maxQuanta: 8 });
      return legit(
        s.provider.calls >= 1,
        `provider calls ${s.provider.calls}; quanta ${s.report.results.map((q: Json) => q.kind).join(',')}`,
      );
    },
    legitFirst: true,
    async attack({ root, c, provider }, { rt }) {
      const used = (await rt.budget(root)).usage.llm_calls ?? 0;
      const status = (await rt.process(c)).status;
      return attack(
        provider.calls > 2 || used > 2,
        status === 'killed' || status === 'failed',
        `provider calls ${provider.calls}; root llm_calls ${used}/2; child ${status}`,
      );
    },
  }),
  story({
    id: 'ADV-52',
    spec: 'K-13',
    area: 'budgets',
    title: 'exec_process does not reset usage: the calls left after exec are what was left before',
    setup: async (w) => {
      const p = await agent(w.rt, 'budgeted', { budget: { tool_calls: 6 } });
      await w.rt.grant(p, 'file:n/*', ['write']);
      for (let i = 0; i < 3; i++) await ok(w.rt, p, 'adv_write', { key: `n/${i}` });
      return { p };
    },
    async attack({ p }, { rt, outside }) {
      const before = (await rt.budget(p)).usage.tool_calls ?? 0;
      const ex = await rt.call(p, 'exec_process', { image: 'adversary-agent:v0', preserve_capabilities: true });
      const after = (await rt.budget(p)).usage.tool_calls ?? 0;
      for (let i = 3; i < 10; i++) await rt.call(p, 'adv_write', { key: `n/${i}` });
      const writes = [...outside.files.keys()].filter((k) => k.startsWith('n/')).length;
      return attack(
        after < before || writes > 5,
        writes === 5,
        `exec: ${describeCall(ex)}; usage ${before} -> ${after}; writes ${writes} (budget 6 = 3 writes + exec + 2)`,
      );
    },
    async legit({ p }, { rt }) {
      const proc = await rt.process(p);
      return legit(
        proc.status === 'runnable' && (await rt.audit({ pid: p, action: 'process.exec' })).length === 1,
        `status ${proc.status}`,
      );
    },
  }),
];

export const ISOLATION_STORIES: readonly Story[] = [...namespaces, ...budgets];
