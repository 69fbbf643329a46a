// Measures one ToolBroker call (table check, zod parse, budget charge, authority check, one transaction with
// audit and events) against a floor measured in the same run: one raw prepared SQLite insert in a transaction.
// Prints the ratio; never asserts a time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from '../packages/kernel/node_modules/better-sqlite3/lib/index.js';
import { capabilities } from '../packages/capabilities/dist/index.js';
import { openRuntime } from '../packages/kernel/dist/index.js';
import { objectMemory } from '../packages/object-memory/dist/index.js';

const N = Number(process.env.BENCH_N ?? 2000);
const dir = mkdtempSync(join(tmpdir(), 'libos-bench-'));

function floor() {
  const db = new Database(join(dir, 'floor.db'));
  db.pragma('journal_mode = WAL');
  db.exec('create table t (id integer primary key, k text, v text)');
  const ins = db.prepare('insert into t (k, v) values (?, ?)');
  const tx = db.transaction((i) => ins.run(`k${i}`, 'v'));
  const t0 = performance.now();
  for (let i = 0; i < N; i++) tx(i);
  const ms = performance.now() - t0;
  db.close();
  return ms / N;
}

async function broker() {
  const rt = await openRuntime({ path: join(dir, 'libos.db'), plugins: [capabilities(), objectMemory()] });
  const p = await rt.spawn({ goal: 'bench', budget: { tool_calls: null } });
  await rt.activateSkill(p.pid, 'agent-libos-object-memory');
  await rt.call(p.pid, 'create_memory_object', { type: 'plan', name: 'ledger', payload: { entries: [] }, immutable: false });
  for (let i = 0; i < 50; i++) await rt.call(p.pid, 'append_memory_object', { name: 'ledger', entry: i }); // warm up
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const r = await rt.call(p.pid, 'append_memory_object', { name: 'ledger', entry: { i } });
    if (!r.ok) throw new Error(`append ${i} failed: ${r.error.code}: ${r.error.message}`);
  }
  const ms = performance.now() - t0;
  await rt.close();
  return ms / N;
}

try {
  const f = floor();
  const b = await broker();
  console.log(`floor: raw prepared SQLite insert in a transaction: ${(f * 1000).toFixed(1)} µs/op`);
  console.log(`broker: append_memory_object through the ToolBroker:   ${(b * 1000).toFixed(1)} µs/op`);
  console.log(`ratio broker/floor: ${(b / f).toFixed(1)}x  (N=${N})`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
