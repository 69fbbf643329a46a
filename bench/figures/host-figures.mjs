// Multi-host figure (issue 15): quanta per second of one fixed batch of scripted processes run to completion by three
// runtime host child processes on one PostgreSQL schema, against the same batch run by one host child. Each block
// has a fresh schema: a driver runtime (a host that never runs the scheduler) spawns and grants the batch, the host
// children open and print ready, and the clock runs from the `go` line to the moment the driver sees every process
// exited. No server answering: `RATIO hosts3_throughput_vs_hosts1 skipped (<reason>)` and the run goes on.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { capabilities } from '@libos/capabilities';
import { openRuntime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { LibosError } from '@libos/sdk';
import { session } from '@libos/session';
import { spawnChecked } from '../lib/libos.mjs';
import { median, oneWarmRound, sideBySide } from '../lib/measure.mjs';
import { dropSchema, serverUrl, withSchema } from '../lib/pg-server.mjs';

const NAME = 'hosts3_throughput_vs_hosts1';
const GOAL = '>=2';
const CHILD = fileURLToPath(new URL('./host-child.mjs', import.meta.url));

/** A non-negative integer knob from the environment, or `def`. */
function knob(name, def, min) {
  const v = Number(process.env[name] ?? def);
  if (!Number.isInteger(v) || v < min) throw new Error(`${name}: an integer >= ${min} (got ${process.env[name]})`);
  return v;
}
/**
 * Trees a host claims per scheduling round (the kernel's default is 8). 1 here: a host claims one more tree each
 * round, so the batch spreads evenly over the hosts (with 8, 41 roots split 9/16/16; with 4, 40 split 12/16/12).
 */
const CLAIM_BATCH = knob('BENCH_HOSTS_CLAIM_BATCH', 1, 1);
/**
 * How long a host child sleeps when it has nothing to run, in ms. Long: a host that ran out of trees only waits for
 * the others (leased trees are never shared), and each idle `rt.run` sends the server a claim round for nothing.
 */
const IDLE_MS = knob('BENCH_HOSTS_IDLE_MS', 100, 0);
/** Scripted steps each host child runs in a scratch schema of its own before it opens the figure's (untimed). */
const WARM_STEPS = knob('BENCH_HOSTS_WARM', 16, 0);
/** How often the driver looks whether the batch is done, in ms. */
const POLL_MS = 20;
const TERMINAL = new Set(['exited', 'failed', 'killed']);

/** Opens a runtime on `url` as host `id` with the plugins the host children load (same migrations). */
const openHost = (url, id) => openRuntime({ path: url, plugins: [capabilities(), objectMemory(), session()], host: { id } });

/** Starts one host child on `url`: `ready` resolves once it opened; `go` starts it; `stop` ends it. */
function startChild(url, id) {
  const child = spawn(process.execPath, [CHILD, url, id, String(CLAIM_BATCH), String(IDLE_MS), String(WARM_STEPS)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  let buf = '';
  let closed;
  const done = new Promise((res) => {
    closed = res;
  });
  const exited = new Promise((res) => child.on('exit', (code) => res(code)));
  child.stderr.on('data', (d) => {
    stderr += String(d);
  });
  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      buf += String(d);
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const msg = JSON.parse(buf.slice(0, i));
        buf = buf.slice(i + 1);
        if (msg.event === 'ready') resolve();
        if (msg.event === 'closed') closed(msg);
      }
    });
    void exited.then((code) => reject(new Error(`host child ${id} ended (${code}) before it was ready:\n${stderr}`)));
  });
  return {
    ready,
    go: () => child.stdin.write('go\n'),
    /** Tells the child to stop; resolves with `{ quanta, cpuMs }` it ran and used since go (throws unless it exits 0). */
    async stop() {
      child.stdin.end('stop\n');
      const code = await exited;
      if (code !== 0) throw new Error(`host child ${id} exited ${code}:\n${stderr}`);
      return done;
    },
    kill: () => child.kill('SIGKILL'),
  };
}

/** The machine's CPU jiffies so far, busy and all (Linux `/proc/stat`; null elsewhere), for the notes. */
function machineCpu() {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const all = f.reduce((a, b) => a + b, 0);
    return { all, busy: all - f[3] - (f[4] ?? 0) }; // idle and iowait are not busy
  } catch {
    return null;
  }
}

/**
 * CPU ms the PostgreSQL server's processes used so far (Linux `/proc`, 100 ticks a second; null elsewhere), for the
 * notes. Backends alive at both readings count whole; the hosts' connections live from before `go` to after the end.
 */
function serverCpuMs() {
  try {
    let ticks = 0;
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      let stat;
      try {
        stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      } catch {
        continue; // ended since the listing
      }
      if (!stat.includes('(postgres)')) continue;
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    }
    return ticks * 10;
  } catch {
    return null;
  }
}

/**
 * One block: a fresh schema, `n` spawned and granted roots, `hosts` children opened (none of that timed), then the
 * batch run to completion from `go`. Returns quanta per second; throws unless every process exited after exactly
 * two quanta in all.
 */
async function block(url, hosts, n, stats) {
  const schema = `libos_bench_hosts_${randomBytes(6).toString('hex')}`;
  const at = withSchema(url, schema);
  const children = [];
  let driver;
  try {
    driver = await openHost(at, 'driver');
    for (let i = 0; i < n; i++) await spawnChecked(driver, { goal: `Tell the time, then exit (${i})` });
    for (let h = 0; h < hosts; h++) children.push(startChild(at, `host-${h}`));
    await Promise.all(children.map((c) => c.ready));
    const cpu0 = machineCpu();
    const server0 = serverCpuMs();
    const t0 = performance.now(); // wall clock always: the work is in other processes
    for (const c of children) c.go();
    for (;;) {
      const all = await driver.processes();
      if (all.every((p) => TERMINAL.has(p.status))) break;
      await new Promise((res) => setTimeout(res, POLL_MS));
    }
    const ms = performance.now() - t0;
    const cpu1 = machineCpu();
    const server1 = serverCpuMs();
    const closed = await Promise.all(children.map((c) => c.stop()));
    const quanta = closed.map((c) => c.quanta);
    children.length = 0;
    const all = await driver.processes();
    const bad = all.filter((p) => p.status !== 'exited');
    const total = quanta.reduce((s, q) => s + q, 0);
    if (all.length !== n || bad.length > 0 || total !== 2 * n) {
      throw new Error(`${hosts} host(s): ${all.length} processes, ${bad.length} not exited, ${total} quanta (expected ${2 * n})`);
    }
    stats.push({
      quanta,
      statementsPerQuantum: closed.reduce((t, c) => t + c.statements, 0) / total,
      hostCpuMsPerQuantum: closed.reduce((t, c) => t + c.cpuMs, 0) / total,
      serverCpuMsPerQuantum: server0 !== null && server1 !== null ? (server1 - server0) / total : Number.NaN,
      machineBusy: cpu1 && cpu0 ? (cpu1.busy - cpu0.busy) / (cpu1.all - cpu0.all) : Number.NaN,
    });
    return (total / ms) * 1000;
  } finally {
    for (const c of children) c.kill();
    await driver?.close();
    await dropSchema(url, schema);
  }
}

export async function hostFigures(ctx) {
  const url = serverUrl();
  // The pg figure's probe: a runtime opened on a schema of the server; only "nothing answers there" (unreachable, no
  // such database) skips, anything else is a crash of the figure.
  const probe = `libos_bench_hosts_${randomBytes(6).toString('hex')}`;
  try {
    await (await openHost(withSchema(url, probe), 'probe')).close();
  } catch (err) {
    if (!(err instanceof LibosError && err.code === 'store_not_found')) throw err;
    process.stdout.write(`RATIO ${NAME} skipped (no postgres server)\n`);
    ctx.note(`  ${NAME}: skipped: ${err.message}`);
    return;
  }
  await dropSchema(url, probe);
  const n = ctx.n(24);
  const three = [];
  const one = [];
  // One warm-up round: the host children warm themselves up (BENCH_HOSTS_WARM) in every block.
  const r = await sideBySide(
    oneWarmRound(ctx),
    (k) => block(url, 3, n, k < 0 ? [] : three),
    (k) => block(url, 1, n, k < 0 ? [] : one),
  );
  const cpu = (st) => median(st.map((x) => x.hostCpuMsPerQuantum)).toFixed(1);
  const sent = (st) => median(st.map((x) => x.statementsPerQuantum)).toFixed(0);
  const server = (st) => median(st.map((x) => x.serverCpuMsPerQuantum)).toFixed(1);
  const busy = (st) => `${(100 * median(st.map((x) => x.machineBusy))).toFixed(0)}%`;
  ctx.note(
    `  ${NAME}: quanta per host (3 hosts) ${three.map((x) => x.quanta.join('/')).join(', ')}; statements per quantum ` +
      `${sent(three)} / ${sent(one)}; host CPU ms per quantum ${cpu(three)} / ${cpu(one)}; server CPU ms per quantum ` +
      `${server(three)} / ${server(one)}; machine CPU busy (every process) ${busy(three)} / ${busy(one)} ` +
      '(medians, 3 hosts / 1 host)',
  );
  // What the ratio can reach at these CPU costs: 3 hosts at best keep every core busy where 1 host kept `busy(one)`
  // of the machine busy, and each quantum costs them (host + server CPU) what it cost 3 hosts.
  const perQuantum = (st) => median(st.map((x) => x.hostCpuMsPerQuantum + x.serverCpuMsPerQuantum));
  const ceiling = ((1 / median(one.map((x) => x.machineBusy))) * perQuantum(one)) / perQuantum(three);
  ctx.note(
    `  ${NAME}: ceiling at these CPU costs ${ceiling.toFixed(2)} = (all cores ÷ ${busy(one)} busy with 1 host) × ` +
      `(${perQuantum(one).toFixed(1)} ÷ ${perQuantum(three).toFixed(1)} ms host + server CPU per quantum, 1 host ÷ 3 hosts)`,
  );
  const detail =
    `quanta/s of ${n} roots x 2 quanta (get_current_time, process_exit) run by 3 host children vs by 1, one PostgreSQL ` +
    `schema per block, claimBatch ${CLAIM_BATCH}, idle sleep ${IDLE_MS} ms; blocks (quanta/s) 3 hosts ` +
    `${r.va.map((v) => v.toFixed(1)).join(' ')}, 1 host ${r.vb.map((v) => v.toFixed(1)).join(' ')}`;
  ctx.report(NAME, r, GOAL, detail);
}
