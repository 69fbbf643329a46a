// process_exit on a one-phase image (docs/behaviour/session.md S-E*): the result's precedence, the atomic exit with
// its event, audit and the parent's wake, irreversibility, and what a reopen keeps. Real kernel, real store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Runtime } from '@libos/kernel';
import type { ObjectsService } from '@libos/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { commitGroups, fails, ok, openHarness, spawnProbe, type Json } from './support/kernel-harness.js';

let rt: Runtime | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(path?: string, idStart = 0): Promise<Runtime> {
  rt = (await openHarness({ ...(path ? { path } : {}), idStart })).rt;
  return rt;
}

const payloadOf = (r: Runtime, oid: string) => r.transaction((scope) => scope.service<ObjectsService>('objects').readPayload(oid));
const resultOid = async (r: Runtime, pid: string) => ((await r.process(pid)).outcome as Json)?.result_oid as string | null;

describe('process_exit, one phase', () => {
  it('[S-E1] an exit with a payload is exited at once with a result_oid; no review is asked or audited', async () => {
    const r = await open();
    const pid = await spawnProbe(r, 'finish');
    const out = await ok(r, pid, 'process_exit', { payload: { done: true } });
    expect(out).toMatchObject({ status: 'exited', pid, result_oid: expect.stringMatching(/^obj_[0-9a-f]{16}$/) });
    expect(out).not.toHaveProperty('completion_review');
    expect(await r.process(pid)).toMatchObject({ status: 'exited', outcome: { result_oid: out.result_oid } });
    expect(await payloadOf(r, out.result_oid)).toEqual({ done: true });
    expect(await r.audit({ pid, action: 'process.exit_review_required' })).toEqual([]);
    expect(await r.audit({ pid, action: 'process.exit' })).toEqual([
      expect.objectContaining({ target: `process:${pid}`, decision: 'exited' }),
    ]);
  });

  it(`[S-E2] result_oid beats payload and message and is used untouched; a payload beats a message; a message alone is \
{message}`, async () => {
    const r = await open();
    const a = await spawnProbe(r, 'exit with an Object');
    const kept = (await ok(r, a, 'create_memory_object', { type: 'observation', name: 'kept', payload: { v: 1 } })).oid as string;
    const before = await r.transaction((scope) => scope.service<ObjectsService>('objects').describe(kept));
    const byOid = await ok(r, a, 'process_exit', { result_oid: kept, payload: { ignored: true }, message: 'ignored too' });
    expect(byOid.result_oid).toBe(kept);
    expect(await payloadOf(r, kept)).toEqual({ v: 1 });
    expect(await r.transaction((scope) => scope.service<ObjectsService>('objects').describe(kept))).toMatchObject({
      version: before!.version,
    });

    const b = await spawnProbe(r, 'exit with a payload');
    const byPayload = await ok(r, b, 'process_exit', { payload: { answer: 42 }, message: 'not this' });
    expect(await payloadOf(r, byPayload.result_oid)).toEqual({ answer: 42 });

    const c = await spawnProbe(r, 'exit with a message');
    const byMessage = await ok(r, c, 'process_exit', { message: 'all done' });
    expect(await payloadOf(r, byMessage.result_oid)).toEqual({ message: 'all done' });
  });

  it('[S-E3] an exit without inputs is exited with result_oid null', async () => {
    const r = await open();
    const pid = await spawnProbe(r, 'leave quietly');
    expect(await ok(r, pid, 'process_exit', {})).toMatchObject({ status: 'exited', result_oid: null });
    expect(await r.process(pid)).toMatchObject({ status: 'exited', outcome: { result_oid: null } });
  });

  it('[S-E4] a malformed result_oid fails the schema; nothing exits and the process stays runnable', async () => {
    const r = await open();
    const pid = await spawnProbe(r, 'try a bad oid');
    for (const bad of ['', 'obj_nothex', 'object:obj_0000000000000000']) {
      const e = await fails(r, pid, 'process_exit', { result_oid: bad });
      expect(e.code).toBe('invalid_arguments');
      expect(e.message).toContain('result_oid');
    }
    expect((await r.process(pid)).status).toBe('runnable');
    expect(await r.audit({ pid, action: 'process.exit' })).toEqual([]);
    expect(await r.events({ pid, type: 'process_exited' })).toEqual([]);
  });

  it('[S-E6] a second exit is an error: the process is terminal and its outcome does not change', async () => {
    const r = await open();
    const pid = await spawnProbe(r, 'exit twice');
    const first = await ok(r, pid, 'process_exit', { payload: { n: 1 } });
    const again = await r.call(pid, 'process_exit', { payload: { n: 2 } });
    expect(again).toMatchObject({ ok: false, error: { code: 'process_not_tool_callable' } });
    expect(await resultOid(r, pid)).toBe(first.result_oid);
    expect(await r.audit({ pid, action: 'process.exit' })).toHaveLength(1);
  });

  it('[S-E7] a parent blocked in wait_child_process is woken by the very commit that ends the child', async () => {
    const r = await open();
    const parent = await spawnProbe(r, 'wait for my child');
    const child = await spawnProbe(r, 'finish', parent);
    expect(await r.call(parent, 'wait_child_process', { child_pid: child })).toMatchObject({
      ok: true,
      wait: { kind: 'child', child_pid: child },
    });
    expect((await r.process(parent)).status).toBe('waiting_event');
    const seen = commitGroups(r);
    await ok(r, child, 'process_exit', { message: 'done' });
    seen.stop();
    // One commit holds the child's end and the parent's wake: there is no moment with the child ended and the parent asleep.
    const exitCommit = seen.groups.find((g) => g.includes('process_exited'));
    expect(exitCommit).toEqual(expect.arrayContaining(['process_exited', 'process_woken']));
    expect((await r.process(parent)).status).toBe('runnable');
    const woken = await r.events({ pid: parent, type: 'process_woken' });
    expect(woken).toHaveLength(1);
    expect(woken[0]!.data).toMatchObject({ reason: expect.stringContaining(child), wait: { kind: 'child', child_pid: child } });
  });

  it('[S-E9] a message-only exit stores {message} and records no human output', async () => {
    const r = await open();
    const pid = await spawnProbe(r, 'leave a note');
    await r.grant(pid, 'human:owner', ['write']);
    const out = await ok(r, pid, 'process_exit', { message: 'note for the parent' });
    expect(await payloadOf(r, out.result_oid)).toEqual({ message: 'note for the parent' });
    expect(await r.events({ type: 'human_output' })).toEqual([]);
    expect(await r.audit({ action: 'human.output' })).toEqual([]);
  });

  it('[S-E12] after a reopen the process is still exited with the same result_oid; its event and audit remain', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'libos-exit-'));
    dirs.push(dir);
    const path = join(dir, 'store.db');
    const first = await open(path);
    const pid = await spawnProbe(first, 'exit then reopen');
    const out = await ok(first, pid, 'process_exit', { payload: { kept: true } });
    await first.close();
    rt = undefined;
    const second = await open(path, 1000);
    expect(await second.process(pid)).toMatchObject({ status: 'exited', outcome: { result_oid: out.result_oid } });
    expect(await second.events({ pid, type: 'process_exited' })).toHaveLength(1);
    expect(await second.audit({ pid, action: 'process.exit' })).toEqual([expect.objectContaining({ decision: 'exited' })]);
    // The result Object's identity survives; its payload was runtime-local (Object Memory's reopen rule).
    const described = await second.transaction((scope) => scope.service<ObjectsService>('objects').describe(out.result_oid));
    expect(described).toMatchObject({ oid: out.result_oid, payloadAvailable: false });
    expect((await second.call(pid, 'process_exit', {})).ok).toBe(false);
  });
});
