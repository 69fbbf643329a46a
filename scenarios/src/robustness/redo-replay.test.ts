// Group commit keeps what it acknowledged: a runtime SIGKILLed right after its calls returned, before SQLite itself
// committed them, loses none of them. The store file alone does not have them; the next open replays the redo log.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { capabilities } from '@libos/capabilities';
import { openRuntime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import type { Json } from '../support/kernel-harness.js';
import { afterAll, describe, expect, it } from 'vitest';

const WORKLOAD = fileURLToPath(new URL('./redo-replay-workload.mjs', import.meta.url));
const CALLS = 12;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `tool.call` audit rows in the SQLite file as it is, read without libOS (and so without replaying anything). */
function auditedInFile(db: string): number {
  const raw = new Database(db, { readonly: true });
  try {
    return (raw.prepare(`select count(*) as n from audit_records where action = 'tool.call'`).get() as { n: number }).n;
  } finally {
    raw.close();
  }
}

describe('redo log replay', () => {
  it('[K-9.7] calls acknowledged before a SIGKILL are all there after the reopen, replayed from the redo log', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'libos-redo-replay-'));
    dirs.push(dir);
    const db = join(dir, 'libos.db');
    const child = spawnSync(process.execPath, [WORKLOAD, db, String(CALLS)], { encoding: 'utf8' });
    expect(child.signal, child.stderr).toBe('SIGKILL');
    const { pid } = JSON.parse(child.stdout.trim()) as { pid: string };
    expect(existsSync(`${db}-redo`)).toBe(true);
    expect(auditedInFile(db)).toBe(0);
    const rt = await openRuntime({ path: db, plugins: [capabilities(), objectMemory()] });
    try {
      const calls = await rt.audit({ pid, action: 'tool.call', limit: 100 });
      expect(calls.map((a) => a.decision)).toEqual(Array(CALLS).fill('ok'));
      // om_objects is object-memory's table, not in the kernel's schema type.
      const names = await rt.transaction<{ name: string }[]>((scope) =>
        (scope.store as Json).selectFrom('om_objects').select('name').where('type', '=', 'observation').orderBy('created_at').execute(),
      );
      expect(names.map((o) => o.name)).toEqual(Array.from({ length: CALLS }, (_, n) => `r${n}`));
    } finally {
      await rt.close();
    }
    expect(existsSync(`${db}-redo`)).toBe(false);
    expect(auditedInFile(db)).toBe(CALLS);
  });
});
