// The call-atomicity workload: a child Node process that call-atomicity.test.ts SIGKILLs at a random moment. It opens
// the store it is given (each start recovers the previous kill), finds or spawns its one process, and makes
// `create_memory_object` calls numbered from the count of Objects already there, until `total` exist. Each call
// changes state in three places at once: an Object row, the process's budget usage, and its audit row and events.
//
// usage: node call-atomicity-workload.mjs <db> <total>
// Prints {"event":"ready"} once the store is open, then {"event":"call","n":n} after each call returns.
import { capabilities } from '@libos/capabilities';
import { openRuntime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';

const [dbPath, totalText] = process.argv.slice(2);
if (!dbPath || !/^\d+$/.test(totalText ?? '')) throw new Error('usage: call-atomicity-workload.mjs <db> <total>');
const total = Number(totalText);
const GOAL = 'call atomicity';
const print = (msg) => process.stdout.write(`${JSON.stringify(msg)}\n`);

const rt = await openRuntime({ path: dbPath, plugins: [capabilities(), objectMemory()] });
let pid = (await rt.processes()).find((p) => p.goal === GOAL && p.parentPid === null)?.pid;
if (!pid) {
  pid = (await rt.spawn({ goal: GOAL, budget: { tool_calls: null } })).pid;
  await rt.activateSkill(pid, 'agent-libos-object-memory');
}
const made = await rt.transaction((scope) =>
  scope.store
    .selectFrom('om_objects')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('name', 'like', 'c%')
    .where('type', '=', 'observation')
    .executeTakeFirstOrThrow(),
);
print({ event: 'ready' });
for (let n = Number(made.n); n < total; n++) {
  const r = await rt.call(pid, 'create_memory_object', { type: 'observation', name: `c${n}`, payload: { n }, immutable: true });
  if (!r.ok) throw new Error(`call ${n} failed: ${r.error.code}: ${r.error.message}`);
  print({ event: 'call', n: n + 1 });
}
await rt.close();
print({ event: 'done' });
