// Calls to one process from many hosts (issue 15, K-15.16): every unit of work of a tree (a call, a phase of a
// quantum) locks the tree's root row first, so calls from two hosts at once queue instead of conflicting: each
// succeeds once and the budget counts each.
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { session } from '@libos/session';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, PG_URL, probePostgres } from '../support/postgres.js';

const unavailable = await probePostgres(PG_URL);
const { schema, url } = freshSchema('t_xcalls');
const open = (id: string) => openRuntime({ path: url, plugins: [capabilities(), session()], host: { id, leaseMs: 2000 } });

describe.skipIf(unavailable !== null)('[K-15.16] calls to one process from two hosts at once', () => {
  const opened: Runtime[] = [];
  afterAll(async () => {
    for (const rt of opened) await rt.close();
    await dropSchema(schema);
  });

  it('[K-15.16] 40 concurrent checked calls from two hosts: all succeed, the budget counts 40, the audit has 40 calls', async () => {
    const a = await open('calls-a');
    const b = await open('calls-b');
    opened.push(a, b);
    const p = await a.spawn({ goal: 'called from everywhere', budget: { tool_calls: 1000 } });
    await a.grant(p.pid, 'clock:now', ['read']);
    const calls = [...Array(20)].flatMap(() => [a.call(p.pid, 'get_current_time', {}), b.call(p.pid, 'get_current_time', {})]);
    const results = await Promise.all(calls);
    expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.error.code)).toEqual([]);
    expect((await b.budget(p.pid)).usage.tool_calls).toBe(40);
    const audited = await a.audit({ pid: p.pid, action: 'tool.call', limit: 1000 });
    expect(audited.filter((r) => r.decision === 'ok')).toHaveLength(40);
  });
});
