import { capabilities, createAuthorityEngine, type AuthorityDecision } from '@libos/capabilities';
import { migrationKit, openRuntime, type Runtime } from '@libos/kernel';
import { objectMemory, type ObjectMemoryService } from '@libos/object-memory';
import { RIGHTS, type Right } from '@libos/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { storeDialect } from './support/kernel-harness.js';

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

const decide = (rt: Runtime, pid: string, resource: string, right: Right) =>
  rt.transaction((scope) => rt.authority.authorize(scope, pid, resource, right));

/** A decision with the caller's own ids named by role, so two owners' decisions compare equal. */
function shape(d: AuthorityDecision, own: Record<string, string>) {
  const role = (id: string | undefined) => (id === undefined ? null : (Object.entries(own).find(([, v]) => v === id)?.[0] ?? 'other'));
  return {
    allowed: d.allowed,
    effect: d.effect,
    policy: d.policy,
    selected: role(d.selectedId),
    matched: d.matchedIds.map(role),
    chain: d.issuerChain.length,
  };
}

/** `count` more Objects owned by `pid`: copies of its Object `oid` with fresh oids and names (fast host-side setup). */
async function ownMore(rt: Runtime, oid: string, count: number): Promise<void> {
  await rt.transaction(async (scope) => {
    const db = scope.store as Json;
    const template = await db.selectFrom('om_objects').selectAll().where('oid', '=', oid).executeTakeFirstOrThrow();
    for (let done = 0; done < count; done += 500) {
      const rows = Array.from({ length: Math.min(500, count - done) }, (_, k) => ({
        ...template,
        oid: `obj_bbbb${(done + k).toString(16).padStart(12, '0')}`,
        name: `bulk-${done + k}`,
      }));
      await db.insertInto('om_objects').values(rows).execute();
    }
  });
}

describe('an owner of 10,000 Objects', () => {
  it("decides every right on its own, another's and a broad object resource exactly as an owner of 1 does", async () => {
    const rt = await open();
    const one = await agent(rt, 'owns one');
    const many = await agent(rt, 'owns many');
    const mine: Record<string, Record<string, string>> = {};
    for (const pid of [one, many]) {
      const ledger = await ok(rt, pid, 'create_memory_object', {
        type: 'plan',
        name: 'ledger',
        payload: { entries: [] },
        immutable: false,
      });
      const note = await ok(rt, pid, 'create_memory_object', { type: 'evidence', name: 'note', payload: 1 });
      mine[pid] = { ledger: ledger.oid, note: note.oid };
    }
    await ownMore(rt, mine[many]!.note!, 9_998);
    const owned = (await rt.capabilities(many)).filter((c) => c.id.startsWith('cap_own:object:'));
    expect(owned.length).toBeGreaterThanOrEqual(10_000);
    expect(owned.every((c) => c.subject === many && c.issuer === many && !c.delegable)).toBe(true);
    const objectRows = await rt.transaction((scope) =>
      (scope.store as Json).selectFrom('cap_grants').select('id').where('subject', '=', many).where('kind', '=', 'object').execute(),
    );
    expect(objectRows).toEqual([]);

    const other = { [one]: many, [many]: one };
    const decisions = new Map<string, ReturnType<typeof shape>>();
    for (const pid of [one, many]) {
      const ids = { ledger: `cap_own:object:${mine[pid]!.ledger}`, note: `cap_own:object:${mine[pid]!.note}` };
      const resources = {
        ledger: `object:${mine[pid]!.ledger}`,
        note: `object:${mine[pid]!.note}`,
        theirs: `object:${mine[other[pid]!]!.ledger}`,
        all: 'object:*',
      };
      for (const [name, resource] of Object.entries(resources)) {
        for (const right of RIGHTS)
          decisions.set(`${pid === one ? 'one' : 'many'} ${name} ${right}`, shape(await decide(rt, pid, resource, right), ids));
      }
    }
    for (const [key, d] of decisions) if (key.startsWith('one ')) expect(decisions.get(key.replace('one ', 'many ')), key).toEqual(d);
    expect(decisions.get('many ledger write')).toEqual({
      allowed: true,
      effect: 'allow',
      policy: 'always_allow',
      selected: 'ledger',
      matched: ['ledger'],
      chain: 1,
    });
    expect(decisions.get('many note write')).toMatchObject({ allowed: false, effect: 'missing' });
    expect(decisions.get('many theirs read')).toMatchObject({ allowed: false, effect: 'missing' });

    // Through the tools: the owner reads and appends to its ledger; the other process finds nothing.
    expect(await ok(rt, many, 'append_memory_object', { name: 'ledger', entry: { n: 1 } })).toMatchObject({ version: 2, length: 1 });
    expect((await ok(rt, many, 'read_memory_object', { name: 'ledger' })).payload).toEqual({ entries: [{ n: 1 }] });
    const denied = await rt.call(one, 'read_memory_object', { name: 'ledger', namespace: `process:${many}` });
    expect(denied.ok).toBe(false);
  }, 120_000);

  it("creating an Object records the owner's rights with the stored grant's audit and event, and roots that handle", async () => {
    const rt = await open();
    const pid = await agent(rt, 'creator');
    const r = await ok(rt, pid, 'create_memory_object', { type: 'plan', name: 'ledger', payload: { entries: [] }, immutable: false });
    const id = `cap_own:object:${r.oid}`;
    const issue = (await rt.audit({ pid, action: 'capability.issue' })).filter((a) => a.target === `object:${r.oid}`);
    expect(issue).toHaveLength(1);
    expect(issue[0]).toMatchObject({
      decision: 'issued',
      details: { capId: id, subject: pid, issuer: pid, effect: 'allow', delegable: false, checked: false, ownership: true },
    });
    expect(issue[0]!.details.rights).toEqual(
      ['read', 'write', 'link', 'diff', 'materialize', 'delete', 'grant'].sort(
        (a, b) => RIGHTS.indexOf(a as Right) - RIGHTS.indexOf(b as Right),
      ),
    );
    const granted = (await rt.events({ type: 'capability.granted' })).filter((e) => (e.data as Json).capId === id);
    expect(granted).toHaveLength(1);
    const roots = await rt.transaction((scope) => scope.service<ObjectMemoryService>('objects').viewRoots(pid));
    expect(roots.find((x) => x.oid === r.oid)?.capabilityId).toBe(id);
    expect((await rt.capabilities(pid)).find((c) => c.id === id)).toMatchObject({
      resource: `object:${r.oid}`,
      metadata: { granted_by: '@libos/object-memory', reason: 'creator handle' },
    });
  });

  it("an older store's stored creator grants become the implicit owner records with the same decisions", async () => {
    const rt = await open();
    const P = await agent(rt, 'P');
    const Q = await agent(rt, 'Q');
    const oids: string[] = [];
    for (const [name, immutable] of [
      ['a', false],
      ['b', true],
      ['c', false],
    ] as const) {
      oids.push((await ok(rt, P, 'create_memory_object', { type: 'plan', name, payload: { entries: [] }, immutable })).oid);
    }
    // Rewrite the store as the old code left it: one stored creator grant per Object, the view roots naming it,
    // a read P transferred to Q from it, and P's relinquished grant on `c`.
    const old = createAuthorityEngine({ clock: rt.clock });
    const stored = await rt.transaction(async (scope) => {
      const db = scope.store as Json;
      const ids: string[] = [];
      for (const [i, oid] of oids.entries()) {
        const rights =
          i === 1
            ? ['read', 'link', 'diff', 'materialize', 'delete', 'grant']
            : ['read', 'link', 'diff', 'materialize', 'delete', 'grant', 'write'];
        const rec = await old.issueTrusted(
          scope,
          {
            subject: P,
            resource: `object:${oid}`,
            rights: rights as Right[],
            metadata: { granted_by: '@libos/object-memory', reason: 'creator handle' },
          },
          P,
        );
        await db.updateTable('om_view_roots').set({ capability_id: rec.id }).where('oid', '=', oid).execute();
        ids.push(rec.id);
      }
      await old.issue(scope, P, { subject: Q, resource: `object:${oids[0]}`, rights: ['read'] });
      await old.revoke(scope, P, ids[2]!);
      return ids;
    });
    const resources = [...oids.map((o) => `object:${o}`), 'object:*'];
    const decisions = async (engine: typeof old, ids: readonly string[]) => {
      const out: ReturnType<typeof shape>[] = [];
      const own = Object.fromEntries(ids.map((id, i) => [`own${i}`, id]));
      for (const pid of [P, Q])
        for (const r of resources)
          for (const right of RIGHTS) out.push(shape(await rt.transaction((scope) => engine.authorize(scope, pid, r, right)), own));
      return out;
    };
    const before = await decisions(old, stored);
    const migration = objectMemory().migrations!.find((m) => m.name === 'object-memory/0003_creator_grants_to_ownership')!;
    await rt.transaction((scope) => migration.up(scope.store, migrationKit(storeDialect(rt)).forStore(scope.store)));
    const implicit = oids.map((o) => `cap_own:object:${o}`);
    expect(await decisions(rt.authority, implicit)).toEqual(before);
    const rows: Json[] = await rt.transaction((scope) =>
      (scope.store as Json).selectFrom('cap_grants').select(['id', 'status', 'parent_cap_id']).where('kind', '=', 'object').execute(),
    );
    expect(rows.map((r: Json) => r.id)).not.toContain(stored[0]);
    expect(rows).toContainEqual({ id: implicit[2], status: 'revoked', parent_cap_id: null });
    expect(rows.find((r: Json) => r.parent_cap_id !== null)).toMatchObject({ parent_cap_id: implicit[0] });
    const roots = await rt.transaction((scope) => scope.service<ObjectMemoryService>('objects').viewRoots(P));
    expect(roots.filter((x) => oids.includes(x.oid)).map((x) => x.capabilityId)).toEqual(implicit);
    expect((await rt.capabilities(P)).filter((c) => oids.some((o) => c.resource === `object:${o}`)).map((c) => c.id)).toEqual(
      implicit.slice(0, 2),
    );
  });
});
