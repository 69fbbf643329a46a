// A host that stalls past its tree lease (issue 15, K-15.25): another host takes the tree over and recovers the
// quantum the first one had under way; when the first host wakes up with the model's reply, its quantum writes
// nothing more of the tree: no llm_calls row, no tool call, no batch, no hand-back. Every unit of a quantum fences on
// the lease (`holdTree`), so one tree never has two writers, even when a lease ran out under a live host.
import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type LlmProvider, type LlmRequest, type Runtime } from '@libos/kernel';
import { session } from '@libos/session';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, PG_URL, probePostgres } from '../support/postgres.js';

const unavailable = await probePostgres(PG_URL);
const { schema, url } = freshSchema('t_fence');
// Leases far longer than the test: only the test ends one (as a host that stalled would see it ended).
const open = (id: string) => openRuntime({ path: url, plugins: [capabilities(), session()], host: { id, leaseMs: 60_000, claimBatch: 1 } });
const SCRIPT = { processes: { '*': [[{ tool: 'get_current_time', args: {} }], [{ tool: 'process_exit', args: { message: 'done' } }]] } };

/** The scripted model, held at its first call until `release()`: the host stalls inside the model call. */
function stalledProvider() {
  const scripted = new ScriptedProvider(SCRIPT);
  let release!: () => void;
  const gate = new Promise<void>((r) => void (release = r));
  let entered!: () => void;
  const inModel = new Promise<void>((r) => void (entered = r));
  const provider: LlmProvider = {
    name: scripted.name,
    model: scripted.model,
    async completeAction(req: LlmRequest) {
      entered();
      await gate;
      return scripted.completeAction(req);
    },
  };
  return { provider, inModel, release };
}

describe.skipIf(unavailable !== null)('[K-15.25] a quantum fences on its tree lease', () => {
  const opened: Runtime[] = [];
  afterAll(async () => {
    for (const rt of opened) await rt.close().catch(() => undefined);
    await dropSchema(schema);
  });

  it('[K-15.25] a host whose tree was taken over mid-quantum writes nothing more of it after the model replies', async () => {
    const a = await open('fence-a');
    const b = await open('fence-b');
    opened.push(a, b);
    const p = await a.spawn({ goal: 'tell the time', budget: { tool_calls: 10 } });
    await a.grant(p.pid, 'clock:now', ['read']);
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => void (w.code === 'host_tree_lost' && warnings.push(w.message));
    process.on('warning', onWarning);
    try {
      const stalled = stalledProvider();
      const runA = a.run({ provider: stalled.provider, maxQuanta: 1 });
      await stalled.inModel;

      // Host a stalls past its lease; host b claims the tree and recovers the quantum a had under way.
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      try {
        await c.query(`update ${schema}.libos_tree_leases set lease_until = now() - interval '1 second' where root_pid = $1`, [p.pid]);
      } finally {
        await c.end();
      }
      const ranB = await b.run({ provider: new ScriptedProvider(SCRIPT), maxQuanta: 1 });
      expect(ranB.quanta).toBe(0);
      const takeover = await b.audit({ action: 'host.tree_taken_over' });
      expect(takeover.map((r) => r.details)).toEqual([expect.objectContaining({ root: p.pid, host: 'fence-b', previous_host: 'fence-a' })]);
      const recovered = await b.process(p.pid);
      expect(recovered.status).toBe('paused');
      const auditBefore = (await b.audit({ pid: p.pid, limit: 1000 })).length;
      const eventsBefore = (await b.events({ pid: p.pid, limit: 1000 })).length;

      // The model answers host a at last: its next unit finds the tree gone and writes nothing.
      stalled.release();
      const ranA = await runA;
      expect(ranA.results.filter((q) => q.pid === p.pid)).toEqual([]);
      expect(warnings).toEqual([expect.stringContaining(`the tree of ${p.pid} was taken over by another host`)]);
      expect((await b.process(p.pid)).status).toBe('paused');
      expect(await b.audit({ pid: p.pid, limit: 1000 })).toHaveLength(auditBefore);
      expect(await b.events({ pid: p.pid, limit: 1000 })).toHaveLength(eventsBefore);
      expect(await b.audit({ pid: p.pid, action: 'tool.call' })).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
