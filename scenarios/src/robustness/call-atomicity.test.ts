// A call is one unit of work: SIGKILL a runtime at random points of 200 calls, reopen, and every call is wholly there
// (its Object, its budget charge, its audit row and its three events) or wholly absent. The workload is a child Node
// process on the built packages; each start continues the numbering where the last kill left it.
// LIBOS_ATOMICITY_KILLS sets the number of kills (default 6).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import type { Json } from '../support/kernel-harness.js';
import { afterAll, describe, expect, it } from 'vitest';

const WORKLOAD = fileURLToPath(new URL('./call-atomicity-workload.mjs', import.meta.url));
const BUILT = ['sdk', 'capabilities', 'object-memory', 'kernel'].map((p) =>
  fileURLToPath(new URL(`../../../packages/${p}/dist/index.js`, import.meta.url)),
);
const TOTAL = 200;
const KILLS = Number(process.env.LIBOS_ATOMICITY_KILLS || 6);

const children = new Set<ChildProcess>();
const dirs: string[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Starts the workload; resolves with its exit once it printed `calls` more calls (then SIGKILLed) or ended. */
async function runWorkload(db: string, killAfter: number | null): Promise<{ readonly calls: number; readonly killed: boolean }> {
  const child = spawn(process.execPath, [WORKLOAD, db, String(TOTAL)], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  let calls = 0;
  let killed = false;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const msg = JSON.parse(line) as { event: string; n?: number };
    if (msg.event !== 'call') return;
    calls++;
    if (killAfter !== null && calls >= killAfter && !killed) {
      killed = true;
      child.kill('SIGKILL'); // lands wherever the next call is: before, inside or after its transaction
    }
  });
  const code = await new Promise<number | string | null>((resolve) => child.once('exit', (c, s) => resolve(c ?? s)));
  if (!killed && code !== 0) throw new Error(`the workload ended (${code}) before its kill:\n${stderr}`);
  return { calls, killed };
}

/** What a reopened store holds for the workload's calls, and every way they disagree. */
async function check(rt: Runtime): Promise<{ readonly objects: number; readonly violations: string[] }> {
  const pid = (await rt.processes()).find((p) => p.goal === 'call atomicity')?.pid;
  if (!pid) return { objects: 0, violations: [] };
  const audit = (await rt.audit({ pid, action: 'tool.call', limit: 10_000 })).filter((a) => a.target === 'tool:create_memory_object');
  const events = await rt.events({ pid, limit: 10_000 });
  const ids = (type: string) =>
    new Set(events.filter((e) => e.type === type && e.data.tool === 'create_memory_object').map((e) => e.data.call_id));
  const audited = new Set(audit.filter((a) => a.decision === 'ok').map((a) => a.callId));
  const names = await rt.transaction<{ name: string }[]>((scope) =>
    (scope.store as Json).selectFrom('om_objects').select('name').where('type', '=', 'observation').where('name', 'like', 'c%').execute(),
  );
  const violations: string[] = [];
  if (audit.some((a) => a.decision !== 'ok'))
    violations.push(`failed calls: ${audit.filter((a) => a.decision !== 'ok').map((a) => a.decision)}`);
  for (const [type, set] of [
    ['tool_called', ids('tool_called')],
    ['tool_completed', ids('tool_completed')],
  ] as const) {
    const missing = [...audited].filter((id) => !set.has(id));
    const extra = [...set].filter((id) => !audited.has(id as string));
    if (missing.length || extra.length)
      violations.push(`${type}: ${missing.length} audited calls without it, ${extra.length} without an audit row`);
  }
  const created = events.filter((e) => e.type === 'object_created').length;
  if (created !== names.length) violations.push(`${names.length} Objects but ${created} object_created events`);
  if (names.length !== audited.size) violations.push(`${names.length} Objects but ${audited.size} audited calls`);
  const expected = Array.from({ length: names.length }, (_, n) => `c${n}`).sort();
  if (JSON.stringify(names.map((r) => r.name).sort()) !== JSON.stringify(expected)) violations.push('the Objects are not c0..c(n-1)');
  const charged = (await rt.budget(pid)).usage.tool_calls ?? 0;
  const allCalls = (await rt.audit({ pid, action: 'tool.call', limit: 10_000 })).length;
  if (charged !== allCalls) violations.push(`budget charged ${charged} tool calls for ${allCalls} audited calls`);
  return { objects: names.length, violations };
}

describe('call atomicity under SIGKILL', () => {
  it(`[K-9.4] SIGKILL at random points of ${TOTAL} calls: after each reopen every call is wholly there or wholly absent`, async () => {
    for (const p of BUILT) if (!existsSync(p)) throw new Error(`${p} is missing: build the packages first (npm run build)`);
    const dir = mkdtempSync(join(tmpdir(), 'libos-atomicity-'));
    dirs.push(dir);
    const db = join(dir, 'libos.db');
    const violations: string[] = [];
    let kills = 0;
    let before = 0;
    for (let k = 0; k < KILLS && before < TOTAL - 1; k++) {
      const left = TOTAL - before;
      const run = await runWorkload(db, randomInt(1, Math.max(2, Math.min(left, Math.ceil((TOTAL / KILLS) * 1.5)))));
      if (run.killed) kills++;
      const rt = await openRuntime({ path: db, plugins: [capabilities(), objectMemory()] });
      try {
        const c = await check(rt);
        violations.push(...c.violations.map((v) => `kill ${k + 1}: ${v}`));
        // Every call the workload saw return committed before it returned; the one the kill hit may be either way.
        if (c.objects < before + run.calls || c.objects > before + run.calls + 1) {
          violations.push(`kill ${k + 1}: ${c.objects} Objects after ${before} + ${run.calls} returned calls`);
        }
        before = c.objects;
      } finally {
        await rt.close();
      }
    }
    await runWorkload(db, null);
    const rt = await openRuntime({ path: db, plugins: [capabilities(), objectMemory()] });
    try {
      const c = await check(rt);
      violations.push(...c.violations.map((v) => `final: ${v}`));
      expect(c.objects).toBe(TOTAL);
    } finally {
      await rt.close();
    }
    console.log(`call atomicity: kills ${kills}, calls ${TOTAL}, violations ${violations.length}`);
    expect(violations).toEqual([]);
  }, 180_000);
});
