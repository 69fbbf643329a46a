// Calls to one process from many hosts (issue 15, K-15.16): every unit of work of a tree (a call, a phase of a
// quantum) locks the tree's root row first, so calls from two hosts at once queue instead of conflicting: each
// succeeds once and the budget counts each. A host's read cache serves one transaction (K-15.18).
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

  it('[K-15.18] a host caches reads for one transaction only: a grant another host revokes, a process it ends, count at once', async () => {
    const [a, b] = opened as [Runtime, Runtime];
    const p = await a.spawn({ goal: 'read twice', budget: { tool_calls: 100 } });
    const cap = await a.grant(p.pid, 'clock:now', ['read']);
    expect((await a.call(p.pid, 'get_current_time', {})).ok).toBe(true);
    await b.revoke(cap.id);
    const denied = await a.call(p.pid, 'get_current_time', {});
    expect(denied.ok ? 'ok' : denied.error.code).toBe('permission_denied');

    const q = await a.spawn({ goal: 'ended elsewhere', budget: { tool_calls: 100 } });
    await a.grant(q.pid, 'clock:now', ['read']);
    expect((await a.call(q.pid, 'get_current_time', {})).ok).toBe(true);
    await b.signal(q.pid, 'terminate');
    const ended = await a.call(q.pid, 'get_current_time', {});
    expect(ended.ok ? 'ok' : ended.error.code).toBe('process_not_tool_callable');
  });
});
