import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type Runtime } from '@libos/kernel';
import { objectMemory, type ObjectMemoryService } from '@libos/object-memory';
import { sequentialIds } from '@libos/sdk';
import { session } from '@libos/session';
import { afterEach, expect, it } from 'vitest';

let rt: Runtime;
afterEach(async () => rt.close());

it('[K-36] a model call publishes its result as a tool_result Object in the view, labelled with what the call observed', async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session()], config: { ids: sequentialIds() } });
  const p = await rt.spawn({ goal: 'read the secret' });
  await rt.activateSkill(p.pid, 'agent-libos-object-memory');
  const made = await rt.call(p.pid, 'create_memory_object', {
    type: 'observation',
    name: 'secret',
    payload: { k: 'v' },
    metadata: { sensitivity: 'confidential' },
  });
  expect(made.ok).toBe(true);
  const provider = new ScriptedProvider([[{ tool: 'read_memory_object', args: { name: 'secret' } }]]);
  const report = await rt.run({ provider, maxQuanta: 1 });
  const call = report.results[0]!.results[0]!;
  expect(call.ok).toBe(true);
  const objects = (await rt.transaction(async (scope) => {
    const svc = scope.service<ObjectMemoryService>('objects');
    const roots = await svc.viewRoots(p.pid);
    return Promise.all(roots.map((r) => svc.inspect(r.oid)));
  }))!;
  const published = objects.find((o) => o?.name === `tool_result:${call.call_id}`);
  expect(published).toMatchObject({
    type: 'tool_result',
    namespace: `process:${p.pid}/tool_results`,
    labels: { sensitivity: 'confidential' },
  });
  // Results live in a child namespace: the model's own listing of its scope is not crowded by them.
  const listed = await rt.call(p.pid, 'list_memory_namespace', {});
  expect(listed).toMatchObject({ ok: true, payload: { namespaces: [{ namespace: `process:${p.pid}/tool_results` }] } });
  expect((listed as { payload: { objects: { type: string }[] } }).payload.objects.map((o) => o.type).sort()).toEqual([
    'goal',
    'observation',
  ]);
  // Host calls return their envelope directly and publish nothing.
  expect(objects.filter((o) => o?.type === 'tool_result')).toHaveLength(1);
});

it('[CAP-52] a prompt carrying secret data never reaches the model: egress_denied before any provider call', async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session()], config: { ids: sequentialIds() } });
  const p = await rt.spawn({ goal: 'hold a secret' });
  await rt.activateSkill(p.pid, 'agent-libos-object-memory');
  expect(
    (await rt.call(p.pid, 'create_memory_object', { type: 'observation', name: 'key', payload: 'x', metadata: { sensitivity: 'secret' } }))
      .ok,
  ).toBe(true);
  const provider = new ScriptedProvider([[{ tool: 'list_memory_namespace', args: {} }]]);
  const report = await rt.run({ provider, maxQuanta: 1 });
  expect(report.results[0]!.kind).toBe('failed');
  expect(provider.calls).toBe(0);
  expect(await rt.llmCalls({ pid: p.pid })).toEqual([]);
  expect(await rt.process(p.pid)).toMatchObject({ status: 'failed', outcome: { kind: 'failed', code: 'egress_denied' } });
});

it('a model that only makes refused calls fails after 8 stalled turns instead of spending model calls for ever', async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session()], config: { ids: sequentialIds() } });
  const p = await rt.spawn({ goal: 'flail' });
  const bad = Array.from({ length: 20 }, () => [{ tool: 'activate_skill', args: { skill_id: 42 } }]);
  const provider = new ScriptedProvider(bad);
  const report = await rt.run({ provider });
  expect(report.idle).toBe(true);
  expect(provider.calls).toBe(8);
  expect(await rt.process(p.pid)).toMatchObject({ status: 'failed', outcome: { code: 'invalid_state' } });
  expect((await rt.process(p.pid)).outcome!.message).toContain('no progress');
});

it('process_exit publishes no result: nobody is left to read it', async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session()], config: { ids: sequentialIds() } });
  const p = await rt.spawn({ goal: 'leave' });
  const report = await rt.run({ provider: new ScriptedProvider([[{ tool: 'process_exit', args: { message: 'bye' } }]]) });
  expect(report.results[0]!.results[0]).toMatchObject({ ok: true, payload: { status: 'exited' } });
  const results = await rt.transaction(async (scope) => scope.service<ObjectMemoryService>('objects').listObjects({ ownerPid: p.pid }));
  expect(results.filter((o) => o.type === 'tool_result')).toEqual([]);
});

it('[OM-77.2] an Object released after the process read it does not fail its later calls, and stays in their provenance', async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session()], config: { ids: sequentialIds() } });
  const reader = await rt.spawn({ goal: 'read what the child left' });
  const child = await rt.spawn({ goal: 'leave something' });
  await rt.activateSkill(reader.pid, 'agent-libos-object-memory');
  const left = (await rt.transaction((scope) =>
    scope.service<ObjectMemoryService>('objects').createForProcess(child.pid, { type: 'observation', name: 'left', payload: 1 }),
  ))!;
  await rt.grant(reader.pid, `object_namespace:${left.namespace}`, ['read']);
  await rt.grant(reader.pid, `object:${left.oid}`, ['read']);
  await rt.grant(reader.pid, 'clock:now', ['read']);
  expect((await rt.call(reader.pid, 'read_memory_object', { name: 'left', namespace: left.namespace })).ok).toBe(true);
  await rt.signal(child.pid, 'terminate', 'done with it'); // its Objects are released
  const inspect = (oid: string) => rt.transaction((scope) => scope.service<ObjectMemoryService>('objects').inspect(oid));
  expect((await inspect(left.oid))?.lifecycle).toBe('released');

  const provider = new ScriptedProvider({
    processes: {
      [reader.pid]: [[{ tool: 'get_current_time', args: {} }], [{ tool: 'process_exit', args: { payload: { seen: 1 } } }]],
    },
  });
  const report = await rt.run({ provider });
  const calls = report.results.filter((q) => q.pid === reader.pid).flatMap((q) => q.results);
  expect(calls.map((c) => (c.ok ? 'ok' : c.error.code))).toEqual(['ok', 'ok']);
  const published = (await rt.transaction(async (scope) => {
    const svc = scope.service<ObjectMemoryService>('objects');
    const roots = await svc.viewRoots(reader.pid);
    return Promise.all(roots.map((r) => svc.inspect(r.oid)));
  }))!.find((o) => o?.name === `tool_result:${calls[0]!.call_id}`);
  expect(published?.provenance.parent_oids).toContain(left.oid);
  const exited = await rt.process(reader.pid);
  const summary = await inspect((exited.outcome as { result_oid: string }).result_oid);
  expect(summary?.provenance.parent_oids).toContain(left.oid);
});

it('[OM-77.3] a process that reads one more Object each turn stores each source about once, and inspect still names all', async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session()], config: { ids: sequentialIds() } });
  const p = await rt.spawn({ goal: 'read forty notes' });
  await rt.activateSkill(p.pid, 'agent-libos-object-memory');
  const notes = (await rt.transaction(async (scope) => {
    const objects = scope.service<ObjectMemoryService>('objects');
    const made = [];
    for (let i = 0; i < 40; i++)
      made.push(await objects.createForProcess(p.pid, { type: 'observation', name: `n${i}`, payload: i, attachToView: false }));
    return made;
  }))!;
  const turns = notes.map((n) => [{ tool: 'read_memory_object', args: { name: n.name } }]);
  const report = await rt.run({ provider: new ScriptedProvider({ processes: { [p.pid]: turns } }), maxQuanta: 40 });
  const callIds = report.results.flatMap((q) => q.results.map((c) => (c.ok ? c.call_id : c.error.code)));
  expect(callIds).toHaveLength(40);
  const results = (await rt.transaction(async (scope) => {
    const svc = scope.service<ObjectMemoryService>('objects');
    const stored = await scope.store
      .selectFrom('om_objects' as never)
      .select(['name', 'provenance'] as never)
      .where('type' as never, '=', 'tool_result' as never)
      .execute();
    const byName = new Map((stored as { name: string; provenance: string }[]).map((r) => [r.name, JSON.parse(r.provenance)]));
    const inspected = await Promise.all((await svc.viewRoots(p.pid)).map((r) => svc.inspect(r.oid)));
    return callIds.map((id) => ({
      stored: byName.get(`tool_result:${id}`).parent_oids.length as number,
      full: inspected.find((o) => o?.name === `tool_result:${id}`)!.provenance.parent_oids,
    }));
  }))!;
  // Result k observed notes 0..k: inspect names them all; the store holds what was new, a whole list every 17th.
  const oids = notes.map((n) => n.oid);
  expect(results.map((r) => [...r.full].sort())).toEqual(oids.map((_, k) => oids.slice(0, k + 1).sort()));
  const stored = results.reduce((n, r) => n + r.stored, 0);
  expect(stored).toBeLessThan(150); // whole lists every time: 820
});
