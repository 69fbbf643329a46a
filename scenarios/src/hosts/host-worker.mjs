// One runtime host of the multi-host suite: a child Node process that multi-host.test.ts starts three times on one
// PostgreSQL schema and may SIGKILL. It opens the store as a host, then runs the scheduler over the trees it claims
// until SIGTERM (a clean stop lets its trees go). Prints {"event":"ready"} once open and {"event":"quanta","n":…}
// after each run that did work.
//
// usage: node host-worker.mjs <postgres url> <host id> <effects log> <lease ms>
import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider } from '@libos/kernel';
import { session } from '@libos/session';
import { HOST_SCRIPT, hostEffects } from './host-effects.mjs';

const [url, hostId, log, leaseText] = process.argv.slice(2);
if (!url || !hostId || !log || !/^\d+$/.test(leaseText ?? '')) throw new Error('usage: host-worker.mjs <url> <host id> <log> <lease ms>');
const print = (msg) => process.stdout.write(`${JSON.stringify(msg)}\n`);

const rt = await openRuntime({
  path: url,
  plugins: [capabilities(), session(), hostEffects({ log, host: hostId })],
  host: { id: hostId, leaseMs: Number(leaseText) },
});
const provider = new ScriptedProvider(HOST_SCRIPT);
let stopping = false;
process.on('SIGTERM', () => {
  stopping = true;
});
print({ event: 'ready' });
let total = 0;
while (!stopping) {
  const r = await rt.run({ provider, maxQuanta: 16 });
  total += r.quanta;
  if (r.quanta > 0) print({ event: 'quanta', n: total });
  else await new Promise((res) => setTimeout(res, 25));
}
await rt.close();
print({ event: 'closed', n: total });
