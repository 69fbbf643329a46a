// The list_memory_namespace tool through the real kernel (ToolBroker, one transaction per call, the authority engine), with the
// plugin test kit: each test opens its own in-memory runtime with Object Memory, a fake clock and sequential ids.
import { describe, expect, test } from 'vitest';
import type { ObjectMemoryService } from '../objects-service.js';
import { objectMemoryToolTests } from '../internal/testing/tool-test-kit.js';

const kit = objectMemoryToolTests();
const { open, agent, twoWithProj, list, create, append } = kit;

const names = async (pid: string, args: Record<string, unknown> = {}) =>
  ((await list(pid, args)).objects as { name: string }[]).map((o) => o.name);

describe('list_memory_namespace', () => {
  test("[OM-9] a fresh process lists its own scope: process:<pid>, no children, only the kernel's goal Object", async () => {
    await open();
    const P = await agent();
    const goalOid = (await kit.t.runtime.process(P)).goalOid;
    const r = await list(P);
    expect(r.namespace).toBe(`process:${P}`);
    expect(r.namespaces).toEqual([]);
    // The kernel creates the goal in the process scope at spawn; nothing else exists yet.
    expect(r.objects.map((o: { oid: string }) => o.oid)).toEqual(goalOid ? [goalOid] : []);
    expect(await list(P, { namespace: '  ' })).toEqual(r);
  });

  test('[OM-10] [OM-72] object entries are exactly oid,namespace,name,type,version; child entries namespace,parent_namespace', async () => {
    const { P } = await twoWithProj();
    await kit.t.ok(P, 'create_memory_namespace', { namespace: 'proj/r' });
    await create(P, { type: 'plan', name: 'p', namespace: 'proj', payload: {}, metadata: { title: 't' } });
    const r = await list(P, { namespace: 'proj' });
    expect(Object.keys(r).sort()).toEqual(['namespace', 'namespaces', 'objects']);
    expect(Object.keys(r.objects[0]).sort()).toEqual(['name', 'namespace', 'oid', 'type', 'version']);
    expect(Object.keys(r.namespaces[0]).sort()).toEqual(['namespace', 'parent_namespace']);
  });

  test('[OM-11] with 60 readable objects the default limit returns 50; limits 1 and 50 are accepted', async () => {
    const { P } = await twoWithProj();
    for (let i = 0; i < 60; i++) await create(P, { type: 'observation', name: `o${i}`, namespace: 'proj', payload: i });
    expect((await list(P, { namespace: 'proj' })).objects).toHaveLength(50);
    expect((await list(P, { namespace: 'proj', limit: null })).objects).toHaveLength(50);
    expect((await list(P, { namespace: 'proj', limit: 50 })).objects).toHaveLength(50);
    expect((await list(P, { namespace: 'proj', limit: 1 })).objects).toHaveLength(1);
  });

  test('[OM-12] 3 objects + 2 children with limit 4 gives 3 objects and 1 namespace (objects first)', async () => {
    const { P } = await twoWithProj();
    for (const n of ['a', 'b', 'c']) await create(P, { type: 'plan', name: n, namespace: 'proj', payload: n });
    await kit.t.ok(P, 'create_memory_namespace', { namespace: 'proj/y' });
    await kit.t.ok(P, 'create_memory_namespace', { namespace: 'proj/x' });
    const r = await list(P, { namespace: 'proj', limit: 4 });
    expect(r.objects).toHaveLength(3);
    expect(r.namespaces).toEqual([{ namespace: 'proj/x', parent_namespace: 'proj' }]);
  });

  test('[OM-13] limit 0, -1, 51 are limit_out_of_range; 1.5, true, "5" are invalid_arguments', async () => {
    await open();
    const P = await agent();
    for (const limit of [0, -1, 51]) {
      const e = await kit.t.fails(P, 'list_memory_namespace', { limit });
      expect(e.code).toBe('limit_out_of_range');
      expect(e.message).toBe(`limit: must be an integer from 1 to 50 (got ${limit})`);
    }
    for (const limit of [1.5, true, '5'])
      expect((await kit.t.fails(P, 'list_memory_namespace', { limit })).code, String(limit)).toBe('invalid_arguments');
  });

  test('[OM-14] given a/b/c, listing a shows only the direct child a/b', async () => {
    await open();
    const P = await agent();
    for (const ns of ['a', 'a/b', 'a/b/c']) await kit.t.ok(P, 'create_memory_namespace', { namespace: ns });
    expect((await list(P, { namespace: 'a' })).namespaces).toEqual([{ namespace: 'a/b', parent_namespace: 'a' }]);
  });

  test('[OM-15] o2 created after o1 is listed first; an append moves o1 back to the front', async () => {
    const { P } = await twoWithProj();
    await create(P, { type: 'plan', name: 'o1', namespace: 'proj', payload: { entries: [] }, immutable: false });
    await create(P, { type: 'plan', name: 'o2', namespace: 'proj', payload: {} });
    expect(await names(P, { namespace: 'proj' })).toEqual(['o2', 'o1']);
    await append(P, { name: 'o1', namespace: 'proj', entry: 1 });
    expect(await names(P, { namespace: 'proj' })).toEqual(['o1', 'o2']);
  });

  test('[OM-16] Q with namespace read but no object read does not see the object', async () => {
    const { P, Q } = await twoWithProj();
    const a = await create(P, { type: 'plan', name: 'hidden', namespace: 'proj', payload: 1 });
    const b = await create(P, { type: 'plan', name: 'shown', namespace: 'proj', payload: 2 });
    await kit.t.grant(Q, 'object_namespace:proj', ['read']);
    await kit.t.grant(Q, `object:${b.oid}`, ['read']);
    const r = await list(Q, { namespace: 'proj' });
    expect(r.objects.map((o: { oid: string }) => o.oid)).toEqual([b.oid]);
    expect(r.objects.map((o: { oid: string }) => o.oid)).not.toContain(a.oid);
  });

  test('[OM-17] Q without namespace read is namespace_denied', async () => {
    const { Q } = await twoWithProj();
    expect((await kit.t.fails(Q, 'list_memory_namespace', { namespace: 'proj' })).code).toBe('namespace_denied');
  });

  test('[OM-18] a one-use object read admits the object in one listing only', async () => {
    const { P, Q } = await twoWithProj();
    const o = await create(P, { type: 'plan', name: 'once', namespace: 'proj', payload: 1 });
    await kit.t.grant(Q, 'object_namespace:proj', ['read']);
    await kit.t.grant(Q, `object:${o.oid}`, ['read'], { uses: 1 });
    expect(await names(Q, { namespace: 'proj' })).toEqual(['once']);
    expect(await names(Q, { namespace: 'proj' })).toEqual([]);
  });

  test('a one-use namespace read is spent by a listing, and restored when the listing fails', async () => {
    const { Q } = await twoWithProj();
    await kit.t.grant(Q, 'object_namespace:proj', ['read'], { uses: 1 });
    expect((await kit.t.fails(Q, 'list_memory_namespace', { namespace: 'proj', limit: 99 })).code).toBe('limit_out_of_range');
    await list(Q, { namespace: 'proj' });
    expect((await kit.t.fails(Q, 'list_memory_namespace', { namespace: 'proj' })).code).toBe('namespace_denied');
  });

  test('[OM-70] Q (granted write on proj) creates proj/q: P listing proj does not show it', async () => {
    const { P, Q } = await twoWithProj();
    await kit.t.grant(Q, 'object_namespace:proj', ['write']);
    await kit.t.ok(Q, 'create_memory_namespace', { namespace: 'proj/q' });
    await kit.t.ok(P, 'create_memory_namespace', { namespace: 'proj/p' });
    expect((await list(P, { namespace: 'proj' })).namespaces).toEqual([{ namespace: 'proj/p', parent_namespace: 'proj' }]);
  });

  test(`[OM-71] listing proj shows proj's objects and child proj/r only; {} shows only the process scope; a missing namespace is \
namespace_not_found`, async () => {
    const { P } = await twoWithProj();
    await kit.t.ok(P, 'create_memory_namespace', { namespace: 'proj/r' });
    await create(P, { type: 'plan', name: 'in-proj', namespace: 'proj', payload: 1 });
    await create(P, { type: 'plan', name: 'in-r', namespace: 'proj/r', payload: 1 });
    await create(P, { type: 'plan', name: 'in-scope', payload: 1 });
    const r = await list(P, { namespace: 'proj' });
    expect(r.objects.map((o: { name: string }) => o.name)).toEqual(['in-proj']);
    expect(r.namespaces).toEqual([{ namespace: 'proj/r', parent_namespace: 'proj' }]);
    const mine = await names(P);
    expect(mine).toContain('in-scope');
    expect(mine).not.toContain('in-proj');
    expect(mine).not.toContain('in-r');
    expect((await kit.t.fails(P, 'list_memory_namespace', { namespace: 'proj/none' })).code).toBe('namespace_denied');
    await kit.t.grant(P, 'object_namespace:*', ['read']);
    expect((await kit.t.fails(P, 'list_memory_namespace', { namespace: 'proj/none' })).code).toBe('namespace_not_found');
  });

  test(`the scan ceiling: 1,100 unreadable objects before the readable one is scan_ceiling_reached, never a silent short \
page`, async () => {
    const { P, Q } = await twoWithProj();
    const last = await create(P, { type: 'plan', name: 'old', namespace: 'proj', payload: 1 });
    await kit.t.runtime.transaction(async (scope) => {
      const svc = scope.service<ObjectMemoryService>('objects');
      for (let i = 0; i < 1_100; i++)
        await svc.createForProcess(P, { type: 'observation', name: `n${i}`, namespace: 'proj', payload: i, attachToView: false });
    });
    await kit.t.grant(Q, 'object_namespace:proj', ['read']);
    await kit.t.grant(Q, `object:${last.oid}`, ['read']);
    expect((await kit.t.fails(Q, 'list_memory_namespace', { namespace: 'proj', limit: 1 })).code).toBe('scan_ceiling_reached');
    expect((await list(P, { namespace: 'proj', limit: 50 })).objects).toHaveLength(50);
  });
});
