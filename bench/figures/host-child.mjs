// One runtime host of the `hosts` figure (host-figures.mjs): a child Node process on the bench's PostgreSQL schema.
// It opens the store as a host and prints `ready`, then waits for a `go` line on stdin (so opening is never timed),
// then runs the scheduler over the trees it claims (the step script: get_current_time, then process_exit) until a
// `stop` line or the end of stdin, sleeping `idleMs` whenever it has nothing to run. On stop it closes (its trees
// go back) and prints `closed`: the quanta it ran, its CPU time and the statements it sent since `go`. Built
// packages only (`@libos/*` resolve to dist here).
//
// Before it opens the figure's store, it runs `warm` steps of its own in a scratch schema (dropped after): a host
// is a long-running process, and a child that starts cold pays V8's compilation of the whole call path in its first
// quanta (about 1.6 times a warm quantum's CPU over the first 48), which a host that runs a third of the batch pays
// three times over. Every other figure warms up the same way (untimed rounds of each side first).
//
// usage: node host-child.mjs <postgres url> <host id> <claim batch> <idle ms> <warm-up steps>
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { spawnChecked, STEP_SCRIPT } from '../lib/libos.mjs';
import { dropSchema, withSchema } from '../lib/pg-server.mjs';

const [url, hostId, batchText, idleText, warmText] = process.argv.slice(2);
const counts = [batchText, idleText, warmText];
if (!url || !hostId || !counts.every((c) => /^\d+$/.test(c ?? ''))) {
  throw new Error('usage: host-child.mjs <postgres url> <host id> <claim batch> <idle ms> <warm-up steps>');
}
const idleMs = Number(idleText);
const print = (msg) => process.stdout.write(`${JSON.stringify(msg)}\n`);

/** Runs `steps` scripted steps on a runtime of its own in a scratch schema next to the figure's, then drops it. */
async function warmUp(steps) {
  if (steps === 0) return;
  const schema = `${new URL(url).searchParams.get('schema') ?? 'libos'}_warm_${hostId.replace(/\W/g, '_')}`;
  const scratch = withSchema(url, schema);
  const warm = await openRuntime({ path: scratch, plugins: [capabilities(), objectMemory(), session()] });
  try {
    for (let i = 0; i < steps; i++) await spawnChecked(warm, { goal: `warm-up ${i}` });
    const r = await warm.run({ provider: new ScriptedProvider(STEP_SCRIPT) });
    if (r.quanta !== 2 * steps) throw new Error(`host ${hostId}: warm-up ran ${r.quanta} quanta, not ${2 * steps}`);
  } finally {
    await warm.close();
    const server = new URL(url);
    server.searchParams.delete('schema');
    await dropSchema(server.toString(), schema);
  }
}
await warmUp(Number(warmText));

const rt = await openRuntime({
  path: url,
  plugins: [capabilities(), objectMemory(), session()],
  host: { id: hostId, claimBatch: Number(batchText) },
});
const provider = new ScriptedProvider(STEP_SCRIPT);

// Statements this host sends the server (every `query` of the kernel's `pg` clients), for the figure's notes.
let statements = 0;
const { Client } = createRequire(import.meta.resolve('@libos/kernel'))('pg');
const query = Client.prototype.query;
Client.prototype.query = function counted(...args) {
  statements++;
  return query.apply(this, args);
};

let go;
const started = new Promise((res) => {
  go = res;
});
let stopping = false;
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim() === 'go') go(true);
  if (line.trim() === 'stop') {
    stopping = true;
    go(false);
  }
});
lines.on('close', () => {
  stopping = true;
  go(false);
});

print({ event: 'ready' });
let total = 0;
let cpu0;
if (await started) {
  cpu0 = process.cpuUsage();
  statements = 0;
  while (!stopping) {
    const r = await rt.run({ provider });
    total += r.quanta;
    const failed = r.results.flatMap((q) => q.results.filter((x) => !x.ok).map((x) => `${q.pid}: ${x.error.code} ${x.error.message}`));
    if (failed.length > 0) throw new Error(`host ${hostId}: tool calls failed: ${failed.join(', ')}`);
    if (r.quanta === 0) await new Promise((res) => setTimeout(res, idleMs));
  }
}
// This process's CPU time from go to stop, in ms (the figure's notes: how busy a host was).
const used = cpu0 ? process.cpuUsage(cpu0) : { user: 0, system: 0 };
const sent = statements;
await rt.close();
print({ event: 'closed', quanta: total, cpuMs: (used.user + used.system) / 1000, statements: sent });
