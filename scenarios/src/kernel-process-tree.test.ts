import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { afterEach, beforeEach, expect, it } from 'vitest';

let rt: Runtime;
beforeEach(async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session()] });
});
afterEach(async () => rt.close());

async function spawner(goal: string, parentPid?: string) {
  const p = await rt.spawn({ goal, ...(parentPid ? { parentPid } : {}) });
  await rt.activateSkill(p.pid, 'agent-libos-child-processes');
  await rt.grant(p.pid, 'process:spawn', ['write']);
  return p;
}
async function spawnChild(pid: string) {
  const r = await rt.call(pid, 'spawn_child_process', { goal: 'work' });
  if (!r.ok) throw new Error(r.error.message);
  return (r.payload as { pid: string }).pid;
}

it('process_exit is refused while a direct child lives, naming it; after the child ends it succeeds', async () => {
  const p = await spawner('parent');
  const child = await spawnChild(p.pid);
  const refused = await rt.call(p.pid, 'process_exit', { message: 'done' });
  expect(refused.ok).toBe(false);
  expect(!refused.ok && refused.error.code).toBe('invalid_state');
  expect(!refused.ok && refused.error.message).toContain(child);
  expect((await rt.process(p.pid)).status).toBe('runnable');
  expect(await rt.call(p.pid, 'signal_child_process', { child_pid: child, signal: 'terminate' })).toMatchObject({ ok: true });
  expect(await rt.call(p.pid, 'process_exit', { message: 'done' })).toMatchObject({ ok: true, payload: { status: 'exited' } });
});

it('terminating a process kills its live descendants; nothing is left running unobserved', async () => {
  const root = await spawner('root');
  const mid = await spawnChild(root.pid);
  await rt.activateSkill(mid, 'agent-libos-child-processes');
  await rt.grant(mid, 'process:spawn', ['write']);
  const leaf = await spawnChild(mid);
  await rt.signal(root.pid, 'terminate');
  for (const pid of [root.pid, mid, leaf]) expect((await rt.process(pid)).status).toBe('killed');
  expect((await rt.process(leaf)).outcome).toMatchObject({ kind: 'killed', code: 'ancestor_ended' });
});

it('a wake is recorded under the woken process, not the one whose exit woke it', async () => {
  const p = await spawner('parent');
  const child = await spawnChild(p.pid);
  expect(await rt.call(p.pid, 'wait_child_process', { child_pid: child })).toMatchObject({ ok: true, wait: { kind: 'child' } });
  await rt.activateSkill(child, 'agent-libos-runtime-session');
  expect(await rt.call(child, 'process_exit', {})).toMatchObject({ ok: true });
  const woken = await rt.events({ type: 'process_woken' });
  expect(woken.map((e) => e.pid)).toEqual([p.pid]);
  expect((await rt.process(p.pid)).status).toBe('runnable');
});
