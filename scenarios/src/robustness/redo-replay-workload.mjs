// The redo-replay workload: a child Node process that makes `calls` create_memory_object calls and then SIGKILLs
// itself at once, before group commit's timer could commit the batch to SQLite (redo-replay.test.ts).
//
// usage: node redo-replay-workload.mjs <db> <calls>
// Prints {"pid":...} once every call returned, then dies.
import { capabilities } from '@libos/capabilities';
import { openRuntime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';

const [dbPath, callsText] = process.argv.slice(2);
if (!dbPath || !/^\d+$/.test(callsText ?? '')) throw new Error('usage: redo-replay-workload.mjs <db> <calls>');
const rt = await openRuntime({ path: dbPath, plugins: [capabilities(), objectMemory()] });
const { pid } = await rt.spawn({ goal: 'redo replay', budget: { tool_calls: null } });
await rt.activateSkill(pid, 'agent-libos-object-memory');
for (let n = 0; n < Number(callsText); n++) {
  const r = await rt.call(pid, 'create_memory_object', { type: 'observation', name: `r${n}`, payload: { n } });
  if (!r.ok) throw new Error(`call ${n} failed: ${r.error.code}: ${r.error.message}`);
}
process.stdout.write(`${JSON.stringify({ pid })}\n`);
process.kill(process.pid, 'SIGKILL');
