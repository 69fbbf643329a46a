import { capabilities, type AuthorityDecision } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { objectMemory, type ObjectMemoryService } from '@libos/object-memory';
import { RIGHTS, type Right } from '@libos/sdk';
import { afterEach, describe, expect, it } from 'vitest';

// An owner's rights on its own Objects derive from ownership (issue 9): no grant row per Object. These stories
// run the real kernel, Object Memory and authority engine, and compare an owner of 1 Object with an owner of 10,000.

const SKILL = 'agent-libos-object-memory';
const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const rt of runtimes.splice(0)) await rt.close();
});

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

async function open(): Promise<Runtime> {
  const rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory()] });
  runtimes.push(rt);
  return rt;
}

async function agent(rt: Runtime, goal: string): Promise<string> {
  const p = await rt.spawn({ goal });
  await rt.activateSkill(p.pid, SKILL);
  return p.pid;
}

async function ok(rt: Runtime, pid: string, tool: string, args: Record<string, unknown>): Promise<Json> {
  const r = await rt.call(pid, tool, args);
  if (!r.ok) throw new Error(`${tool} failed: ${JSON.stringify(r.error)}`);
  return r.payload;
}

const decide = (rt: Runtime, pid: string, resource: string, right: Right) => rt.transaction((scope) => rt.authority.authorize(scope, pid, resource, right));

/** A decision with the caller's own ids named by role, so two owners' decisions compare equal. */
function shape(d: AuthorityDecision, own: Record<string, string>) {
  const role = (id: string | undefined) => (id === undefined ? null : (Object.entries(own).find(([, v]) => v === id)?.[0] ?? 'other'));
  return { allowed: d.allowed, effect: d.effect, policy: d.policy, selected: role(d.selectedId), matched: d.matchedIds.map(role), chain: d.issuerChain.length };
}

/** `count` more Objects owned by `pid`: copies of its Object `oid` with fresh oids and names (fast host-side setup). */
async function ownMore(rt: Runtime, oid: string, count: number): Promise<void> {
  await rt.transaction(async (scope) => {
    const db = scope.store as Json;
    const template = await db.selectFrom('om_objects').selectAll().where('oid', '=', oid).executeTakeFirstOrThrow();
    for (let done = 0; done < count; done += 500) {
      const rows = Array.from({ length: Math.min(500, count - done) }, (_, k) => ({ ...template, oid: `obj_bbbb${(done + k).toString(16).padStart(12, '0')}`, name: `bulk-${done + k}` }));
      await db.insertInto('om_objects').values(rows).execute();
    }
  });
}

describe('an owner of 10,000 Objects', () => {
  it('decides every right on its own, another\'s and a broad object resource exactly as an owner of 1 does', async () => {
    const rt = await open();
    const one = await agent(rt, 'owns one');
    const many = await agent(rt, 'owns many');
    const mine: Record<string, Record<string, string>> = {};
    for (const pid of [one, many]) {
      const ledger = await ok(rt, pid, 'create_memory_object', { type: 'plan', name: 'ledger', payload: { entries: [] }, immutable: false });
      const note = await ok(rt, pid, 'create_memory_object', { type: 'evidence', name: 'note', payload: 1 });
      mine[pid] = { ledger: ledger.oid, note: note.oid };
    }
    await ownMore(rt, mine[many]!.note!, 9_998);
    const owned = (await rt.capabilities(many)).filter((c) => c.id.startsWith('cap_own:object:'));
    expect(owned.length).toBeGreaterThanOrEqual(10_000);
    expect(owned.every((c) => c.subject === many && c.issuer === many && !c.delegable)).toBe(true);
    const objectRows = await rt.transaction((scope) => (scope.store as Json).selectFrom('cap_grants').select('id').where('subject', '=', many).where('kind', '=', 'object').execute());
    expect(objectRows).toEqual([]);

    const other = { [one]: many, [many]: one };
    const decisions = new Map<string, ReturnType<typeof shape>>();
    for (const pid of [one, many]) {
      const ids = { ledger: `cap_own:object:${mine[pid]!.ledger}`, note: `cap_own:object:${mine[pid]!.note}` };
      const resources = { ledger: `object:${mine[pid]!.ledger}`, note: `object:${mine[pid]!.note}`, theirs: `object:${mine[other[pid]!]!.ledger}`, all: 'object:*' };
      for (const [name, resource] of Object.entries(resources)) {
        for (const right of RIGHTS) decisions.set(`${pid === one ? 'one' : 'many'} ${name} ${right}`, shape(await decide(rt, pid, resource, right), ids));
      }
    }
    for (const [key, d] of decisions) if (key.startsWith('one ')) expect(decisions.get(key.replace('one ', 'many ')), key).toEqual(d);
    expect(decisions.get('many ledger write')).toEqual({ allowed: true, effect: 'allow', policy: 'always_allow', selected: 'ledger', matched: ['ledger'], chain: 1 });
    expect(decisions.get('many note write')).toMatchObject({ allowed: false, effect: 'missing' });
    expect(decisions.get('many theirs read')).toMatchObject({ allowed: false, effect: 'missing' });

    // Through the tools: the owner reads and appends to its ledger; the other process finds nothing.
    expect(await ok(rt, many, 'append_memory_object', { name: 'ledger', entry: { n: 1 } })).toMatchObject({ version: 2, length: 1 });
    expect((await ok(rt, many, 'read_memory_object', { name: 'ledger' })).payload).toEqual({ entries: [{ n: 1 }] });
    const denied = await rt.call(one, 'read_memory_object', { name: 'ledger', namespace: `process:${many}` });
    expect(denied.ok).toBe(false);
  }, 120_000);

  it('creating an Object records the owner\'s rights with the same audit and event as the stored grant had, and roots that handle', async () => {
    const rt = await open();
    const pid = await agent(rt, 'creator');
    const r = await ok(rt, pid, 'create_memory_object', { type: 'plan', name: 'ledger', payload: { entries: [] }, immutable: false });
    const id = `cap_own:object:${r.oid}`;
    const issue = (await rt.audit({ pid, action: 'capability.issue' })).filter((a) => a.target === `object:${r.oid}`);
    expect(issue).toHaveLength(1);
    expect(issue[0]).toMatchObject({ decision: 'issued', details: { capId: id, subject: pid, issuer: pid, effect: 'allow', delegable: false, checked: false, ownership: true } });
    expect(issue[0]!.details.rights).toEqual(['read', 'write', 'link', 'diff', 'materialize', 'delete', 'grant'].sort((a, b) => RIGHTS.indexOf(a as Right) - RIGHTS.indexOf(b as Right)));
    const granted = (await rt.events({ type: 'capability.granted' })).filter((e) => (e.data as Json).capId === id);
    expect(granted).toHaveLength(1);
    const roots = await rt.transaction((scope) => scope.service<ObjectMemoryService>('objects').viewRoots(pid));
    expect(roots.find((x) => x.oid === r.oid)?.capabilityId).toBe(id);
    expect((await rt.capabilities(pid)).find((c) => c.id === id)).toMatchObject({ resource: `object:${r.oid}`, metadata: { granted_by: '@libos/object-memory', reason: 'creator handle' } });
  });
});
