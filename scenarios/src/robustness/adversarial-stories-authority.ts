// Long file: a table of adversarial stories, one per attack, each reading alone.
import type { Runtime } from '@libos/kernel';
import { agent, attack, childOf, describeCall, legit, story, type Story, type World } from './adversarial-harness.js';

/**
 * Attacks on authority itself: widening a delegation, racing one-use grants, living on after a revocation, and
 * calling what is not in the table or what is visible without a right. Every check reads back state: grants held,
 * processes that exist, and the outside world the `adv_*` tools change.
 */

interface Family {
  readonly p: string;
  readonly c: string;
  readonly cap: { readonly id: string };
}

/** A parent holding `process:spawn` write and one host grant, and a child it spawned through the model's tool. */
async function family(
  w: World,
  resource: string,
  rights: ('read' | 'write')[],
  opts: { delegable?: boolean; uses?: number; expiresAt?: string; effect?: 'allow' | 'deny' | 'ask' } = {},
): Promise<Family> {
  const p = await agent(w.rt, 'parent');
  await w.rt.grant(p, 'process:spawn', ['write']);
  const cap = await w.rt.grant(p, resource, rights, opts);
  const c = await childOf(w.rt, p);
  return { p, c, cap };
}

const delegate = (
  rt: Runtime,
  from: string,
  args: {
    child_pid: string;
    capability_id: string;
    resource: string;
    rights: string[];
    expires_at?: string;
    uses_remaining?: number;
    delegable?: boolean;
  },
) => rt.call(from, 'delegate_capability', args);
const reads = async (rt: Runtime, pid: string, key: string) => (await rt.call(pid, 'adv_read', { key })).ok;
/** Live `file:` grants of a process (what a delegation or an inheritance could have given it). */
const fileGrants = async (rt: Runtime, pid: string) => (await rt.capabilities(pid)).filter((c) => c.resource.startsWith('file:'));
const iso = (w: World, plusMs: number) => new Date(w.clock.now().getTime() + plusMs).toISOString();
const HOUR = 3_600_000;

const delegation: Story[] = [
  story({
    id: 'ADV-01',
    spec: 'CAP-25',
    area: 'delegation',
    title: 'a delegation cannot widen the resource (file:src/* held, file:* asked)',
    setup: (w) => family(w, 'file:src/*', ['read'], { delegable: true }),
    async attack({ p, c, cap }, { rt }) {
      const r = await delegate(rt, p, { child_pid: c, capability_id: cap.id, resource: 'file:*', rights: ['read'] });
      const leaked = await reads(rt, c, 'etc/passwd');
      return attack(
        leaked || (await fileGrants(rt, c)).length > 0,
        !r.ok,
        `delegate: ${describeCall(r)}; child reads etc/passwd: ${leaked}`,
      );
    },
    async legit({ p, c, cap }, { rt }) {
      const r = await delegate(rt, p, { child_pid: c, capability_id: cap.id, resource: 'file:src/a', rights: ['read'] });
      return legit(r.ok && (await reads(rt, c, 'src/a')), `delegate file:src/a: ${describeCall(r)}`);
    },
  }),
  story({
    id: 'ADV-02',
    spec: 'CAP-25',
    area: 'delegation',
    title: 'a delegation cannot widen the rights (read held, read+write asked)',
    setup: (w) => family(w, 'file:src/*', ['read'], { delegable: true }),
    async attack({ p, c, cap }, { rt, outside }) {
      const r = await delegate(rt, p, { child_pid: c, capability_id: cap.id, resource: 'file:src/a', rights: ['read', 'write'] });
      const w = await rt.call(c, 'adv_write', { key: 'src/a', text: 'pwned' });
      return attack(
        outside.files.has('src/a') || (await fileGrants(rt, c)).length > 0,
        !r.ok && !w.ok,
        `delegate: ${describeCall(r)}; child write: ${describeCall(w)}`,
      );
    },
    async legit({ p, c, cap }, { rt }) {
      const r = await delegate(rt, p, { child_pid: c, capability_id: cap.id, resource: 'file:src/a', rights: ['read'] });
      return legit(r.ok && (await reads(rt, c, 'src/a')), `delegate read: ${describeCall(r)}`);
    },
  }),
  story({
    id: 'ADV-03',
    spec: 'CAP-26',
    area: 'delegation',
    title: 'a delegation cannot outlive its parent (a later expiry is refused)',
    setup: async (w) => ({
      ...(await family(w, 'file:src/*', ['read'], { delegable: true, expiresAt: iso(w, HOUR) })),
      until: iso(w, HOUR),
    }),
    async attack({ p, c, cap, until }, w) {
      const r = await delegate(w.rt, p, {
        child_pid: c,
        capability_id: cap.id,
        resource: 'file:src/a',
        rights: ['read'],
        expires_at: iso(w, 2 * HOUR),
      });
      const longer = (await fileGrants(w.rt, c)).filter((g) => g.expiresAt === null || g.expiresAt > until);
      return attack(longer.length > 0, !r.ok, `delegate until +2h: ${describeCall(r)}`);
    },
    async legit({ p, c, cap }, w) {
      const r = await delegate(w.rt, p, {
        child_pid: c,
        capability_id: cap.id,
        resource: 'file:src/a',
        rights: ['read'],
        expires_at: iso(w, HOUR / 2),
      });
      return legit(r.ok && (await reads(w.rt, c, 'src/a')), `delegate until +30m: ${describeCall(r)}`);
    },
  }),
  story({
    id: 'ADV-04',
    spec: 'CAP-20',
    area: 'delegation',
    title: 'a delegation without an expiry still dies with its parent’s expiry',
    legitFirst: true,
    setup: (w) => family(w, 'file:src/*', ['read'], { delegable: true, expiresAt: iso(w, HOUR) }),
    async legit({ p, c, cap }, { rt }) {
      const r = await delegate(rt, p, { child_pid: c, capability_id: cap.id, resource: 'file:src/a', rights: ['read'] });
      return legit(r.ok && (await reads(rt, c, 'src/a')), `delegate without expiry, read before it: ${describeCall(r)}`);
    },
    async attack({ c }, w) {
      w.clock.advance(2 * HOUR);
      const r = await w.rt.call(c, 'adv_read', { key: 'src/a' });
      return attack(r.ok, !r.ok, `child read two hours later: ${describeCall(r)}`);
    },
  }),
  story({
    id: 'ADV-05',
    spec: 'CAP-27',
    area: 'delegation',
    title: 'host (ambient, non-delegable) authority is never delegated nor inherited',
    setup: async (w) => {
      const f = await family(w, 'file:src/*', ['read']);
      const lib = await w.rt.grant(f.p, 'file:lib/*', ['read'], { delegable: true });
      return { ...f, lib };
    },
    async attack({ p, c, cap }, { rt }) {
      const d = await delegate(rt, p, { child_pid: c, capability_id: cap.id, resource: 'file:src/a', rights: ['read'] });
      const before = (await rt.processes()).length;
      const s = await rt.call(p, 'spawn_child_process', {
        goal: 'inherit ambient',
        inherit_capabilities: [{ resource: 'file:src/a', rights: ['read'] }],
      });
      const spawned = (await rt.processes()).length - before;
      const effect = spawned > 0 || (await reads(rt, c, 'src/a'));
      return attack(effect, !d.ok && !s.ok, `delegate: ${describeCall(d)}; inherit: ${describeCall(s)}`);
    },
    async legit({ p, c, lib }, { rt }) {
      const r = await delegate(rt, p, { child_pid: c, capability_id: lib.id, resource: 'file:lib/a', rights: ['read'] });
      return legit(r.ok && (await reads(rt, c, 'lib/a')), `delegate from a delegable grant: ${describeCall(r)}`);
    },
  }),
  story({
    id: 'ADV-06',
    spec: 'CAP-31',
    area: 'delegation',
    title: 'a finite (counted) grant is never delegated, even when marked delegable',
    setup: async (w) => {
      const f = await family(w, 'file:src/*', ['read'], { delegable: true, uses: 5 });
      const lib = await w.rt.grant(f.p, 'file:lib/*', ['read'], { delegable: true });
      return { ...f, lib };
    },
    async attack({ p, c, cap }, { rt }) {
      const r = await delegate(rt, p, { child_pid: c, capability_id: cap.id, resource: 'file:src/a', rights: ['read'] });
      return attack(
        (await reads(rt, c, 'src/a')) || (await fileGrants(rt, c)).length > 0,
        !r.ok,
        `delegate from a 5-use grant: ${describeCall(r)}`,
      );
    },
    async legit({ p, c, lib }, { rt }) {
      const r = await delegate(rt, p, { child_pid: c, capability_id: lib.id, resource: 'file:lib/a', rights: ['read'], uses_remaining: 1 });
      return legit(r.ok && (await reads(rt, c, 'lib/a')), `one-use copy of an unlimited grant: ${describeCall(r)}`);
    },
  }),
  story({
    id: 'ADV-07',
    spec: 'CAP-25',
    area: 'delegation',
    title: 'a non-delegable copy cannot be passed on to a grandchild',
    setup: async (w) => {
      const f = await family(w, 'file:src/*', ['read'], { delegable: true });
      const copy = await delegate(w.rt, f.p, { child_pid: f.c, capability_id: f.cap.id, resource: 'file:src/a', rights: ['read'] });
      if (!copy.ok) throw new Error(`setup: ${describeCall(copy)}`);
      await w.rt.grant(f.c, 'process:spawn', ['write']);
      const g = await childOf(w.rt, f.c);
      return { ...f, g, copyId: (copy.payload as { capability_id: string }).capability_id };
    },
    async attack({ c, g, copyId }, { rt }) {
      const r = await delegate(rt, c, { child_pid: g, capability_id: copyId, resource: 'file:src/a', rights: ['read'] });
      return attack(await reads(rt, g, 'src/a'), !r.ok, `re-delegate a non-delegable copy: ${describeCall(r)}`);
    },
    async legit({ p, c, g, cap }, { rt }) {
      const copy = await delegate(rt, p, {
        child_pid: c,
        capability_id: cap.id,
        resource: 'file:src/b',
        rights: ['read'],
        delegable: true,
      });
      const id = copy.ok ? (copy.payload as { capability_id: string }).capability_id : 'none';
      const r = await delegate(rt, c, { child_pid: g, capability_id: id, resource: 'file:src/b', rights: ['read'] });
      return legit(copy.ok && r.ok && (await reads(rt, g, 'src/b')), `delegable copy passed on: ${describeCall(copy)}; ${describeCall(r)}`);
    },
  }),
  story({
    id: 'ADV-08',
    spec: 'CAP-34',
    area: 'delegation',
    title: 'spawn_child_process cannot inherit more than a delegable grant covers; the whole spawn is refused',
    setup: (w) => family(w, 'file:src/*', ['read'], { delegable: true }),
    async attack({ p }, { rt }) {
      const before = (await rt.processes()).length;
      const wide = await rt.call(p, 'spawn_child_process', {
        goal: 'wider',
        inherit_capabilities: [{ resource: 'file:*', rights: ['read'] }],
      });
      const more = await rt.call(p, 'spawn_child_process', {
        goal: 'more rights',
        inherit_capabilities: [
          { resource: 'file:src/a', rights: ['read'] },
          { resource: 'file:src/a', rights: ['write'] },
        ],
      });
      const spawned = (await rt.processes()).length - before;
      return attack(
        spawned > 0,
        !wide.ok && !more.ok,
        `wider: ${describeCall(wide)}; more rights: ${describeCall(more)}; new processes: ${spawned}`,
      );
    },
    async legit({ p }, { rt }) {
      const r = await rt.call(p, 'spawn_child_process', {
        goal: 'narrow',
        inherit_capabilities: [{ resource: 'file:src/a', rights: ['read'] }],
      });
      const pid = r.ok ? (r.payload as { pid: string }).pid : '';
      return legit(r.ok && (await reads(rt, pid, 'src/a')), `inherit file:src/a read: ${describeCall(r)}`);
    },
  }),
  story({
    id: 'ADV-09',
    spec: 'CAP-30',
    area: 'delegation',
    title: 'anti-laundering: a parent under a deny cannot delegate the covering allow around it',
    setup: async (w) => {
      const f = await family(w, 'file:*', ['read'], { delegable: true });
      await w.rt.grant(f.p, 'file:secret', ['read'], { effect: 'deny' });
      return f;
    },
    async attack({ p, c, cap }, { rt }) {
      const r = await delegate(rt, p, { child_pid: c, capability_id: cap.id, resource: 'file:*', rights: ['read'] });
      return attack(
        (await reads(rt, c, 'secret')) || (await fileGrants(rt, c)).length > 0,
        !r.ok,
        `delegate file:* around the deny: ${describeCall(r)}`,
      );
    },
    async legit({ p, c, cap }, { rt }) {
      const r = await delegate(rt, p, { child_pid: c, capability_id: cap.id, resource: 'file:pub/*', rights: ['read'] });
      return legit(r.ok && (await reads(rt, c, 'pub/x')), `delegate file:pub/* (no overlap with the deny): ${describeCall(r)}`);
    },
  }),
  story({
    id: 'ADV-10',
    spec: 'CAP-25',
    area: 'delegation',
    title: 'a delegation goes only to a live direct child: never to a stranger, a grandchild or an ended child',
    setup: async (w) => {
      const f = await family(w, 'file:src/*', ['read'], { delegable: true });
      const stranger = await agent(w.rt, 'stranger');
      await w.rt.grant(f.c, 'process:spawn', ['write']);
      const grandchild = await childOf(w.rt, f.c);
      const ended = await childOf(w.rt, f.p);
      const killed = await w.rt.call(f.p, 'signal_child_process', { child_pid: ended, signal: 'terminate' });
      if (!killed.ok) throw new Error(`setup: ${describeCall(killed)}`);
      return { ...f, targets: [stranger, grandchild, ended] };
    },
    async attack({ p, cap, targets }, { rt }) {
      const results = [];
      for (const t of targets)
        results.push(await delegate(rt, p, { child_pid: t, capability_id: cap.id, resource: 'file:src/a', rights: ['read'] }));
      let held = 0;
      for (const t of targets) held += (await fileGrants(rt, t)).length;
      return attack(
        held > 0,
        results.every((r) => !r.ok),
        results.map(describeCall).join(' | '),
      );
    },
    async legit({ p, c, cap }, { rt }) {
      const r = await delegate(rt, p, { child_pid: c, capability_id: cap.id, resource: 'file:src/a', rights: ['read'] });
      return legit(r.ok && (await reads(rt, c, 'src/a')), describeCall(r));
    },
  }),
  story({
    id: 'ADV-11',
    spec: 'CAP-12',
    area: 'delegation',
    title: 'a process cannot delegate another process’s capability by naming its id',
    setup: async (w) => {
      const f = await family(w, 'file:src/*', ['read'], { delegable: true });
      const q = await agent(w.rt, 'victim');
      const theirs = await w.rt.grant(q, 'file:q/*', ['read'], { delegable: true });
      return { ...f, theirs };
    },
    async attack({ p, c, theirs }, { rt }) {
      const r = await delegate(rt, p, { child_pid: c, capability_id: theirs.id, resource: 'file:q/a', rights: ['read'] });
      return attack(await reads(rt, c, 'q/a'), !r.ok, `delegate the victim’s cap: ${describeCall(r)}`);
    },
    async legit({ p, c, cap }, { rt }) {
      const r = await delegate(rt, p, { child_pid: c, capability_id: cap.id, resource: 'file:src/a', rights: ['read'] });
      return legit(r.ok && (await reads(rt, c, 'src/a')), describeCall(r));
    },
  }),
  story({
    id: 'ADV-12',
    spec: 'CAP-21',
    area: 'delegation',
    title: 'a grant-shaped message payload mints nothing and is not even posted',
    setup: (w) => family(w, 'file:src/*', ['read'], { delegable: true }),
    async attack({ p, c, cap }, { rt }) {
      const shapes = [
        { resource: 'file:*', rights: ['read', 'write'] },
        { grant: { capability_id: cap.id, subject: c } },
        { note: 'as agreed', capability: cap.id },
      ];
      const results = [];
      for (const payload of shapes) results.push(await rt.call(p, 'send_process_message', { to_pid: c, payload }));
      const posted = (await rt.messages(c)).length;
      const effect = posted > 0 || (await reads(rt, c, 'src/a')) || (await fileGrants(rt, c)).length > 0;
      return attack(
        effect,
        results.every((r) => !r.ok),
        `${results.map(describeCall).join(' | ')}; posted ${posted}`,
      );
    },
    async legit({ p, c }, { rt }) {
      const r = await rt.call(p, 'send_process_message', { to_pid: c, payload: { note: 'please read src/a' } });
      const got = await rt.call(c, 'receive_process_messages', {});
      return legit(
        r.ok && got.ok && (got.payload as { messages: unknown[] }).messages.length === 1,
        `${describeCall(r)}; ${describeCall(got)}`,
      );
    },
  }),
  story({
    id: 'ADV-13',
    spec: 'CAP-35',
    area: 'delegation',
    title: 'a child cannot revoke its parent’s grant; the parent can revoke what it delegated',
    setup: (w) => family(w, 'file:src/*', ['read'], { delegable: true }),
    async attack({ p, c, cap }, { rt }) {
      const r = await rt.call(c, 'revoke_capability', { capability_id: cap.id });
      const still = (await rt.capabilities(p)).some((g) => g.id === cap.id);
      return attack(!still || !(await reads(rt, p, 'src/a')), !r.ok, `child revokes the parent’s grant: ${describeCall(r)}`);
    },
    async legit({ p, c, cap }, { rt }) {
      const d = await delegate(rt, p, { child_pid: c, capability_id: cap.id, resource: 'file:src/a', rights: ['read'] });
      const id = d.ok ? (d.payload as { capability_id: string }).capability_id : 'none';
      const before = await reads(rt, c, 'src/a');
      const r = await rt.call(p, 'revoke_capability', { capability_id: id });
      return legit(before && r.ok && !(await reads(rt, c, 'src/a')), `delegate, read, revoke: ${describeCall(r)}`);
    },
  }),
  story({
    id: 'ADV-14',
    spec: 'CAP-35',
    area: 'delegation',
    title: 'a process cannot drop its own deny (to unlock a covering allow); it may relinquish its own allow',
    setup: async (w) => {
      const p = await agent(w.rt, 'denied');
      await w.rt.grant(p, 'file:*', ['read']);
      const deny = await w.rt.grant(p, 'file:secret', ['read'], { effect: 'deny' });
      const tmp = await w.rt.grant(p, 'file:tmp', ['read']);
      return { p, deny, tmp };
    },
    async attack({ p, deny }, { rt }) {
      const r = await rt.call(p, 'revoke_capability', { capability_id: deny.id });
      return attack(await reads(rt, p, 'secret'), !r.ok, `drop own deny: ${describeCall(r)}`);
    },
    async legit({ p, tmp }, { rt }) {
      const r = await rt.call(p, 'revoke_capability', { capability_id: tmp.id });
      const gone = !(await rt.capabilities(p)).some((g) => g.id === tmp.id);
      return legit(r.ok && gone, `relinquish own allow: ${describeCall(r)}`);
    },
  }),
  story({
    id: 'ADV-15',
    spec: 'CAP-39',
    area: 'delegation',
    title: 'request_permission for privileged or whole-kind authority is refused before any human sees it',
    setup: async (w) => {
      const p = await agent(w.rt, 'asker');
      await w.rt.grant(p, 'human:owner', ['write']);
      return { p };
    },
    async attack({ p }, { rt }) {
      const asks = [
        { resource: 'capability:*', rights: ['admin'] },
        { resource: 'file:*', rights: ['write'] },
        { resource: 'process:*', rights: ['admin'] },
      ];
      const results = [];
      for (const a of asks) results.push(await rt.call(p, 'request_permission', { ...a, reason: 'I need it' }));
      const queued = (await rt.humanRequests({ pid: p })).length;
      return attack(
        queued > 0,
        results.every((r) => !r.ok),
        `${results.map(describeCall).join(' | ')}; queued ${queued}`,
      );
    },
    async legit({ p }, { rt }) {
      const r = await rt.call(p, 'request_permission', { resource: 'file:docs/readme', rights: ['read'], reason: 'to read the docs' });
      return legit(
        r.ok && r.wait?.kind === 'human' && (await rt.humanRequests({ pid: p, status: 'pending' })).length === 1,
        describeCall(r),
      );
    },
  }),
];

/** Runs `n` copies of a call at once (the broker's transactions interleave on the one store). */
const race = (rt: Runtime, n: number, pid: string, tool: string, args: (i: number) => Record<string, unknown>) =>
  Promise.all(Array.from({ length: n }, (_, i) => rt.call(pid, tool, args(i))));

const oneUse: Story[] = [
  story({
    id: 'ADV-16',
    spec: 'CAP-14',
    area: 'one-use',
    title: 'a one-use write grant raced by 5 parallel calls has exactly one effect',
    setup: async (w) => {
      const p = await agent(w.rt, 'racer');
      await w.rt.grant(p, 'file:race/*', ['write'], { uses: 1 });
      await w.rt.grant(p, 'file:solo', ['write'], { uses: 1 });
      return { p };
    },
    async attack({ p }, { rt, outside }) {
      const rs = await race(rt, 5, p, 'adv_write', (i) => ({ key: `race/${i}` }));
      const writes = [...outside.files.keys()].filter((k) => k.startsWith('race/')).length;
      return attack(
        writes > 1,
        rs.filter((r) => !r.ok).length === 4,
        `writes ${writes}; results ${rs.map((r) => (r.ok ? 'ok' : r.error.code)).join(',')}`,
      );
    },
    async legit({ p }, { rt, outside }) {
      const r = await rt.call(p, 'adv_write', { key: 'solo' });
      return legit(r.ok && outside.files.has('solo'), describeCall(r));
    },
  }),
  story({
    id: 'ADV-17',
    spec: 'CAP-15',
    area: 'one-use',
    title: 'a three-use grant raced by 8 parallel calls has exactly three effects',
    setup: async (w) => {
      const p = await agent(w.rt, 'racer');
      await w.rt.grant(p, 'file:race/*', ['write'], { uses: 3 });
      await w.rt.grant(p, 'file:seq/*', ['write'], { uses: 3 });
      return { p };
    },
    async attack({ p }, { rt, outside }) {
      const rs = await race(rt, 8, p, 'adv_write', (i) => ({ key: `race/${i}` }));
      const writes = [...outside.files.keys()].filter((k) => k.startsWith('race/')).length;
      const left = (await rt.capabilities(p, { includeInactive: true })).find((c) => c.resource === 'file:race/*')?.usesRemaining;
      return attack(writes > 3, rs.filter((r) => !r.ok).length === 5, `writes ${writes}; uses left ${left}`);
    },
    async legit({ p }, { rt, outside }) {
      const rs = [];
      for (let i = 0; i < 3; i++) rs.push(await rt.call(p, 'adv_write', { key: `seq/${i}` }));
      return legit(rs.every((r) => r.ok) && [0, 1, 2].every((i) => outside.files.has(`seq/${i}`)), rs.map(describeCall).join(' | '));
    },
  }),
  story({
    id: 'ADV-18',
    spec: 'CAP-14',
    area: 'one-use',
    title: 'a one-use process:spawn grant raced by 3 parallel spawns makes exactly one child',
    setup: async (w) => {
      const p = await agent(w.rt, 'spawner');
      await w.rt.grant(p, 'process:spawn', ['write'], { uses: 1 });
      return { p };
    },
    async attack({ p }, { rt }) {
      const rs = await race(rt, 3, p, 'spawn_child_process', (i) => ({ goal: `child ${i}` }));
      const children = (await rt.processes()).filter((x) => x.parentPid === p).length;
      return attack(children > 1, rs.filter((r) => !r.ok).length === 2, `children ${children}`);
    },
    async legit({ p }, { rt }) {
      await rt.grant(p, 'process:spawn', ['write'], { uses: 1 });
      const before = (await rt.processes()).filter((x) => x.parentPid === p).length;
      const r = await rt.call(p, 'spawn_child_process', { goal: 'one more' });
      const after = (await rt.processes()).filter((x) => x.parentPid === p).length;
      return legit(r.ok && after === before + 1, describeCall(r));
    },
  }),
  story({
    id: 'ADV-19',
    spec: 'CAP-14',
    area: 'one-use',
    title: 'a one-use grant raced through 4 parallel REST /call requests has exactly one effect',
    setup: async (w) => {
      const p = await agent(w.rt, 'racer');
      await w.rt.grant(p, 'file:race/*', ['write'], { uses: 1 });
      await w.rt.grant(p, 'file:solo', ['write'], { uses: 1 });
      return { p, http: await w.surfaces() };
    },
    async attack({ p, http }, { outside }) {
      const rs = await Promise.all(
        [0, 1, 2, 3].map((i) => http.api(`/api/processes/${p}/call`, { json: { tool: 'adv_write', args: { key: `race/${i}` } } })),
      );
      const writes = [...outside.files.keys()].filter((k) => k.startsWith('race/')).length;
      const refused = rs.filter((r) => r.body?.ok === false).length;
      return attack(writes > 1, refused === 3, `writes ${writes}; statuses ${rs.map((r) => `${r.status}/${r.body?.ok}`).join(',')}`);
    },
    async legit({ p, http }, { outside }) {
      const r = await http.api(`/api/processes/${p}/call`, { json: { tool: 'adv_write', args: { key: 'solo' } } });
      return legit(r.status === 200 && r.body?.ok === true && outside.files.has('solo'), r.text.slice(0, 160));
    },
  }),
  story({
    id: 'ADV-20',
    spec: 'CAP-40',
    area: 'one-use',
    title: 'two concurrent answers to one permission request: exactly one decision lands, one record',
    setup: async (w) => {
      const asker = async () => {
        const p = await agent(w.rt, 'asker');
        await w.rt.grant(p, 'human:owner', ['write']);
        const r = await w.rt.call(p, 'request_permission', { resource: 'file:docs', rights: ['read'], reason: 'read the docs' });
        if (!r.ok) throw new Error(`setup: ${describeCall(r)}`);
        const [req] = await w.rt.humanRequests({ pid: p, status: 'pending' });
        return { pid: p, req: req!.id };
      };
      return { a: await asker(), b: await asker(), http: await w.surfaces() };
    },
    async attack({ a, http }, { rt }) {
      const [yes, no] = await Promise.all([
        http.api(`/api/human-requests/${a.req}/respond`, { json: { approved: true, decision: { policy: 'always_allow' } } }),
        http.api(`/api/human-requests/${a.req}/respond`, { json: { approved: false, decision: { policy: 'always_deny' } } }),
      ]);
      const records = (await rt.capabilities(a.pid)).filter((c) => c.resource === 'file:docs').length;
      const accepted = [yes, no].filter((r) => r.status === 200).length;
      return attack(accepted > 1 || records > 1, accepted <= 1, `statuses ${yes.status}/${no.status}; records ${records}`);
    },
    async legit({ b, http }, { rt }) {
      const r = await http.api(`/api/human-requests/${b.req}/respond`, { json: { approved: true, decision: { policy: 'always_allow' } } });
      const records = (await rt.capabilities(b.pid)).filter((c) => c.resource === 'file:docs' && c.effect === 'allow').length;
      return legit(r.status === 200 && records === 1, `status ${r.status}; records ${records}`);
    },
  }),
  story({
    id: 'ADV-21',
    spec: 'OM-18',
    area: 'one-use',
    title: 'a one-use Object read shows the Object to a stranger once, then never again',
    legitFirst: true,
    setup: async (w) => {
      const p = await agent(w.rt, 'owner');
      const q = await agent(w.rt, 'stranger');
      const ns = await w.rt.call(p, 'create_memory_namespace', { namespace: 'proj' });
      const made = await w.rt.call(p, 'create_memory_object', {
        type: 'observation',
        namespace: 'proj',
        name: 'note',
        payload: { text: 'once only' },
      });
      if (!ns.ok || !made.ok) throw new Error(`setup: ${describeCall(ns)} ${describeCall(made)}`);
      await w.rt.grant(q, 'object_namespace:proj', ['read']);
      await w.rt.grant(q, `object:${(made.payload as { oid: string }).oid}`, ['read'], { uses: 1 });
      return { q };
    },
    async legit({ q }, { rt }) {
      const r = await rt.call(q, 'list_memory_namespace', { namespace: 'proj' });
      return legit(r.ok && (r.payload as { objects: { name: string }[] }).objects.some((o) => o.name === 'note'), describeCall(r));
    },
    async attack({ q }, { rt }) {
      const again = await rt.call(q, 'list_memory_namespace', { namespace: 'proj' });
      const read = await rt.call(q, 'read_memory_object', { namespace: 'proj', name: 'note' });
      const seen = again.ok && (again.payload as { objects: { name: string }[] }).objects.some((o) => o.name === 'note');
      return attack(seen || read.ok, !read.ok, `second list: ${describeCall(again)}; read: ${describeCall(read)}`);
    },
  }),
];

/** A chain P → C → G holding copies of P's delegable `file:src/*` read (each copy delegable but G's). */
async function chain(w: World) {
  const f = await family(w, 'file:src/*', ['read'], { delegable: true });
  const copy = await delegate(w.rt, f.p, {
    child_pid: f.c,
    capability_id: f.cap.id,
    resource: 'file:src/*',
    rights: ['read'],
    delegable: true,
  });
  if (!copy.ok) throw new Error(`setup: ${describeCall(copy)}`);
  const copyId = (copy.payload as { capability_id: string }).capability_id;
  await w.rt.grant(f.c, 'process:spawn', ['write']);
  const g = await childOf(w.rt, f.c);
  const sub = await delegate(w.rt, f.c, { child_pid: g, capability_id: copyId, resource: 'file:src/a', rights: ['read'] });
  if (!sub.ok) throw new Error(`setup: ${describeCall(sub)}`);
  return { ...f, g, copyId };
}

const revocation: Story[] = [
  story({
    id: 'ADV-22',
    spec: 'CAP-32',
    area: 'revocation',
    title: 'after the host revokes the root grant, child and grandchild copies are dead',
    legitFirst: true,
    setup: chain,
    async legit({ c, g }, { rt }) {
      const both = (await reads(rt, c, 'src/a')) && (await reads(rt, g, 'src/a'));
      return legit(both, 'child and grandchild read before the revocation');
    },
    async attack({ c, g, cap }, { rt }) {
      await rt.revoke(cap.id);
      const child = await rt.call(c, 'adv_read', { key: 'src/a' });
      const grandchild = await rt.call(g, 'adv_read', { key: 'src/a' });
      return attack(
        child.ok || grandchild.ok,
        !child.ok && !grandchild.ok,
        `child: ${describeCall(child)}; grandchild: ${describeCall(grandchild)}`,
      );
    },
  }),
  story({
    id: 'ADV-23',
    spec: 'CAP-32',
    area: 'revocation',
    title: 'after the parent revokes its delegated copy (model tool), the grandchild’s sub-copy is dead too',
    legitFirst: true,
    setup: chain,
    async legit({ g }, { rt }) {
      return legit(await reads(rt, g, 'src/a'), 'grandchild reads before the revocation');
    },
    async attack({ p, c, g, copyId }, { rt }) {
      const r = await rt.call(p, 'revoke_capability', { capability_id: copyId });
      if (!r.ok) throw new Error(`the parent could not revoke its own delegation: ${describeCall(r)}`);
      const child = await rt.call(c, 'adv_read', { key: 'src/b' });
      const grandchild = await rt.call(g, 'adv_read', { key: 'src/a' });
      return attack(
        child.ok || grandchild.ok,
        !child.ok && !grandchild.ok,
        `child: ${describeCall(child)}; grandchild: ${describeCall(grandchild)}`,
      );
    },
  }),
  story({
    id: 'ADV-24',
    spec: 'CAP-32',
    area: 'revocation',
    title: 'a child holding a copy from a revoked chain cannot delegate it onwards',
    legitFirst: true,
    setup: chain,
    async legit({ c, copyId }, { rt }) {
      const g1 = await childOf(rt, c);
      const r = await delegate(rt, c, { child_pid: g1, capability_id: copyId, resource: 'file:src/x', rights: ['read'] });
      return legit(r.ok && (await reads(rt, g1, 'src/x')), `delegate before the revocation: ${describeCall(r)}`);
    },
    async attack({ c, cap, copyId }, { rt }) {
      await rt.revoke(cap.id);
      const g2 = await childOf(rt, c);
      const r = await delegate(rt, c, { child_pid: g2, capability_id: copyId, resource: 'file:src/y', rights: ['read'] });
      return attack(
        (await reads(rt, g2, 'src/y')) || (await fileGrants(rt, g2)).length > 0,
        !r.ok,
        `delegate from a dead chain: ${describeCall(r)}`,
      );
    },
  }),
  story({
    id: 'ADV-25',
    spec: 'CAP-34',
    area: 'revocation',
    title: 'grants inherited at spawn die when the parent’s grant is revoked',
    legitFirst: true,
    setup: async (w) => {
      const f = await family(w, 'file:src/*', ['read'], { delegable: true });
      const heir = await childOf(w.rt, f.p, { goal: 'heir', inherit_capabilities: [{ resource: 'file:src/a', rights: ['read'] }] });
      return { ...f, heir };
    },
    async legit({ heir }, { rt }) {
      return legit(await reads(rt, heir, 'src/a'), 'the heir reads what it inherited');
    },
    async attack({ heir, cap }, { rt }) {
      await rt.revoke(cap.id);
      const r = await rt.call(heir, 'adv_read', { key: 'src/a' });
      return attack(r.ok, !r.ok, `after the revocation: ${describeCall(r)}`);
    },
  }),
  story({
    id: 'ADV-26',
    spec: 'CAP-32',
    area: 'revocation',
    title: 'revocation is not undone by an exec: a revoked copy stays dead with preserve_capabilities',
    legitFirst: true,
    setup: chain,
    async legit({ c }, { rt }) {
      return legit(await reads(rt, c, 'src/a'), 'the child reads before the revocation');
    },
    async attack({ c, copyId, p }, { rt }) {
      const r = await rt.call(p, 'revoke_capability', { capability_id: copyId });
      const ex = await rt.call(c, 'exec_process', { image: 'adversary-agent:v0', preserve_capabilities: true });
      const read = await rt.call(c, 'adv_read', { key: 'src/a' });
      return attack(read.ok, r.ok && !read.ok, `revoke: ${describeCall(r)}; exec: ${describeCall(ex)}; read: ${describeCall(read)}`);
    },
  }),
];

const tools: Story[] = [
  story({
    id: 'ADV-27',
    spec: 'K-33',
    area: 'tools',
    title: 'a tool some plugin defines but the process’s table lacks is refused and never runs',
    setup: async (w) => {
      const p = await agent(w.rt, 'caller');
      await w.rt.grant(p, 'file:a', ['read']);
      return { p };
    },
    async attack({ p }, { rt, outside }) {
      const r = await rt.call(p, 'adv_hidden', {});
      return attack(outside.runs.includes('adv_hidden'), !r.ok && r.error.code === 'tool_not_in_process_table', describeCall(r));
    },
    async legit({ p }, { rt, outside }) {
      const r = await rt.call(p, 'adv_read', { key: 'a' });
      return legit(r.ok && outside.runs.includes('adv_read:a'), describeCall(r));
    },
  }),
  story({
    id: 'ADV-28',
    spec: 'K-31',
    area: 'tools',
    title: 'visibility is never authority: a visible write tool without a grant changes nothing',
    setup: async (w) => ({ p: await agent(w.rt, 'sees adv_write') }),
    async attack({ p }, { rt, outside }) {
      const visible = (await rt.process(p)).visibleTools.includes('adv_write');
      const r = await rt.call(p, 'adv_write', { key: 'etc/motd', text: 'owned' });
      return attack(
        outside.files.has('etc/motd'),
        visible && !r.ok && r.error.category === 'permission_denied',
        `visible ${visible}; ${describeCall(r)}`,
      );
    },
    async legit({ p }, { rt, outside }) {
      await rt.grant(p, 'file:etc/motd', ['write']);
      const r = await rt.call(p, 'adv_write', { key: 'etc/motd', text: 'hello' });
      return legit(r.ok && outside.files.get('etc/motd') === 'hello', describeCall(r));
    },
  }),
  story({
    id: 'ADV-29',
    spec: 'K-31',
    area: 'tools',
    title: 'a visible spawn_child_process without process:spawn creates no process',
    setup: async (w) => ({ p: await agent(w.rt, 'would spawn') }),
    async attack({ p }, { rt }) {
      const before = (await rt.processes()).length;
      const r = await rt.call(p, 'spawn_child_process', { goal: 'an unauthorized child' });
      return attack((await rt.processes()).length > before, !r.ok, describeCall(r));
    },
    async legit({ p }, { rt }) {
      await rt.grant(p, 'process:spawn', ['write']);
      const r = await rt.call(p, 'spawn_child_process', { goal: 'an authorized child' });
      return legit(r.ok && (await rt.processes()).some((x) => x.parentPid === p), describeCall(r));
    },
  }),
  story({
    id: 'ADV-30',
    spec: 'K-31',
    area: 'tools',
    title: 'activate_skill without skill:<id> execute loads nothing and reveals no tool',
    setup: async (w) => ({ p: (await w.rt.spawn({ goal: 'base agent' })).pid }),
    async attack({ p }, { rt }) {
      const before = (await rt.process(p)).visibleTools;
      const r = await rt.call(p, 'activate_skill', { skill_id: 'agent-libos-authority' });
      const after = await rt.process(p);
      return attack(after.visibleTools.length !== before.length || 'agent-libos-authority' in after.loadedSkills, !r.ok, describeCall(r));
    },
    async legit({ p }, { rt }) {
      await rt.grant(p, 'skill:agent-libos-authority', ['execute']);
      const r = await rt.call(p, 'activate_skill', { skill_id: 'agent-libos-authority' });
      return legit(r.ok && (await rt.process(p)).visibleTools.includes('delegate_capability'), describeCall(r));
    },
  }),
  story({
    id: 'ADV-31',
    spec: 'K-3',
    area: 'tools',
    title: 'spawning a child on another image needs image:<id> read (the image’s tools are not free)',
    setup: async (w) => {
      const p = await agent(w.rt, 'spawner');
      await w.rt.grant(p, 'process:spawn', ['write']);
      return { p };
    },
    async attack({ p }, { rt }) {
      const before = (await rt.processes()).length;
      const r = await rt.call(p, 'spawn_child_process', { goal: 'other image', image: 'coding-agent:v0' });
      return attack((await rt.processes()).length > before, !r.ok, describeCall(r));
    },
    async legit({ p }, { rt }) {
      await rt.grant(p, 'image:coding-agent:v0', ['read']);
      const r = await rt.call(p, 'spawn_child_process', { goal: 'other image', image: 'coding-agent:v0' });
      return legit(r.ok && (await rt.processes()).some((x) => x.parentPid === p && x.imageId === 'coding-agent:v0'), describeCall(r));
    },
  }),
  story({
    id: 'ADV-32',
    spec: 'K-13',
    area: 'tools',
    title: 'exec into another image grants nothing: no new capability, and the old image’s tools are gone',
    setup: async (w) => {
      const p = await agent(w.rt, 'exec me');
      await w.rt.grant(p, 'image:coding-agent:v0', ['read']);
      await w.rt.grant(p, 'file:a', ['read']);
      return { p, before: (await w.rt.capabilities(p)).map((c) => c.id) };
    },
    async attack({ p, before }, { rt }) {
      const r = await rt.call(p, 'exec_process', { image: 'coding-agent:v0', preserve_capabilities: true });
      const gained = (await rt.capabilities(p)).filter((c) => !before.includes(c.id));
      const read = await rt.call(p, 'adv_read', { key: 'a' });
      return attack(
        gained.length > 0 || read.ok,
        null,
        `exec: ${describeCall(r)}; gained ${gained.map((c) => c.resource).join(',') || 'nothing'}; adv_read: ${describeCall(read)}`,
      );
    },
    async legit({ p }, { rt }) {
      const proc = await rt.process(p);
      return legit(proc.imageId === 'coding-agent:v0' && proc.status === 'runnable', `image ${proc.imageId}, status ${proc.status}`);
    },
  }),
];

export const AUTHORITY_STORIES: readonly Story[] = [...delegation, ...oneUse, ...revocation, ...tools];
