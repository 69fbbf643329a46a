// The create_memory_namespace tool through the real kernel (ToolBroker, one transaction per call, the authority engine), with the
// plugin test kit: each test opens its own in-memory runtime with Object Memory, a fake clock and sequential ids.
import { describe, expect, test } from 'vitest';
import { objectMemoryToolTests } from '../internal/testing/tool-test-kit.js';

const kit = objectMemoryToolTests();
const { open, agent, twoWithProj } = kit;

const rightsOn = async (pid: string, resource: string) =>
  (await kit.t.runtime.capabilities(pid))
    .filter((c) => c.resource === resource)
    .flatMap((c) => c.rights)
    .sort();

describe('create_memory_namespace', () => {
  test('[OM-1] creating proj returns {namespace, parent_namespace:null, created:true} and grants P read/write/admin', async () => {
    await open();
    const P = await agent();
    expect(await kit.t.ok(P, 'create_memory_namespace', { namespace: 'proj' })).toEqual({
      namespace: 'proj',
      parent_namespace: null,
      created: true,
    });
    expect(await rightsOn(P, 'object_namespace:proj')).toEqual(['admin', 'read', 'write']);
  });

  test('[OM-2] creating proj/r under proj reports parent proj', async () => {
    const { P } = await twoWithProj();
    expect(await kit.t.ok(P, 'create_memory_namespace', { namespace: 'proj/r' })).toEqual({
      namespace: 'proj/r',
      parent_namespace: 'proj',
      created: true,
    });
    expect(await kit.t.ok(P, 'create_memory_namespace', { namespace: 'proj/s', parent_namespace: 'proj' })).toMatchObject({
      parent_namespace: 'proj',
    });
  });

  test('[OM-3] creating proj again is namespace_exists and changes nothing', async () => {
    const { P } = await twoWithProj();
    const capsBefore = await kit.t.runtime.capabilities(P);
    const eventsBefore = await kit.t.runtime.events({ type: 'object_namespace_created' });
    const e = await kit.t.fails(P, 'create_memory_namespace', { namespace: 'proj', metadata: { v: 2 } });
    expect(e.code).toBe('namespace_exists');
    expect(await kit.t.runtime.capabilities(P)).toEqual(capsBefore);
    expect(await kit.t.runtime.events({ type: 'object_namespace_created' })).toHaveLength(eventsBefore.length);
  });

  test('[OM-4] x/y without x is namespace_denied; with object_namespace:* write it is namespace_not_found', async () => {
    await open();
    const P = await agent();
    expect((await kit.t.fails(P, 'create_memory_namespace', { namespace: 'x/y' })).code).toBe('namespace_denied');
    await kit.t.grant(P, 'object_namespace:*', ['write']);
    expect((await kit.t.fails(P, 'create_memory_namespace', { namespace: 'x/y' })).code).toBe('namespace_not_found');
  });

  test("[OM-5] Q creating proj/q under P's proj is namespace_denied", async () => {
    const { Q } = await twoWithProj();
    const e = await kit.t.fails(Q, 'create_memory_namespace', { namespace: 'proj/q' });
    expect(e.code).toBe('namespace_denied');
    expect(e.message).toContain('object_namespace:proj');
  });

  test('[OM-6] " /proj/r/ " and "proj\\\\r" normalize to proj/r', async () => {
    const { P } = await twoWithProj();
    expect((await kit.t.ok(P, 'create_memory_namespace', { namespace: ' /proj/r/ ' })).namespace).toBe('proj/r');
    expect((await kit.t.fails(P, 'create_memory_namespace', { namespace: 'proj\\r' })).code).toBe('namespace_exists');
  });

  test('[OM-7] "", "a//b", "a/./b", "a/../b", "a/ b" are invalid_namespace', async () => {
    await open();
    const P = await agent();
    for (const namespace of ['', 'a//b', 'a/./b', 'a/../b', 'a/ b']) {
      expect((await kit.t.fails(P, 'create_memory_namespace', { namespace })).code, namespace).toBe('invalid_namespace');
    }
  });

  test('an explicit parent_namespace must be the path parent', async () => {
    const { P } = await twoWithProj();
    await kit.t.ok(P, 'create_memory_namespace', { namespace: 'mine' });
    const e = await kit.t.fails(P, 'create_memory_namespace', { namespace: 'proj/x', parent_namespace: 'mine' });
    expect(e.code).toBe('invalid_namespace');
    expect(e.message).toContain('"mine"');
    expect(e.message).toContain('"proj"');
    expect((await kit.t.fails(P, 'create_memory_namespace', { namespace: 'top', parent_namespace: 'proj' })).code).toBe(
      'invalid_namespace',
    );
    expect(await kit.t.ok(P, 'create_memory_namespace', { namespace: 'top', parent_namespace: '  ' })).toMatchObject({
      parent_namespace: null,
    });
  });

  test('top-level process: scopes are reserved for the runtime', async () => {
    await open();
    const P = await agent();
    expect((await kit.t.fails(P, 'create_memory_namespace', { namespace: 'process:pid_0000000000000000' })).code).toBe('namespace_denied');
    expect(await kit.t.ok(P, 'create_memory_namespace', { namespace: `process:${P}/notes` })).toEqual({
      namespace: `process:${P}/notes`,
      parent_namespace: `process:${P}`,
      created: true,
    });
  });

  test('[OM-8] namespace metadata {"grant":"all"} grants nothing: Q listing it is namespace_denied', async () => {
    await open();
    const P = await agent();
    const Q = await agent();
    await kit.t.ok(P, 'create_memory_namespace', { namespace: 'open', metadata: { grant: 'all' } });
    expect((await kit.t.fails(Q, 'list_memory_namespace', { namespace: 'open' })).code).toBe('namespace_denied');
    expect((await kit.t.fails(P, 'create_memory_namespace', { namespace: 'bad', metadata: 'x' })).code).toBe('invalid_metadata');
  });

  test('[OM-84] Q without write on proj creating an existing proj/r is namespace_denied, not namespace_exists', async () => {
    const { P, Q } = await twoWithProj();
    await kit.t.ok(P, 'create_memory_namespace', { namespace: 'proj/r' });
    expect((await kit.t.fails(Q, 'create_memory_namespace', { namespace: 'proj/r' })).code).toBe('namespace_denied');
  });
});
