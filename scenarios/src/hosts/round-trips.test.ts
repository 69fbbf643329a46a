// Round trips a unit of work costs on PostgreSQL (K-15.19): the driver defers BEGIN and SAVEPOINT, sends them together
// before the first statement that must run, drops savepoints nothing ran in and never sends RELEASE.
import { createRequire } from 'node:module';
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { session } from '@libos/session';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, PG_URL, probePostgres } from '../support/postgres.js';

const unavailable = await probePostgres(PG_URL);
const { schema, url } = freshSchema('t_trips');

/** Every query text `pg` sends while `fn` runs. */
async function sentDuring(fn: () => Promise<unknown>): Promise<string[]> {
  const { Client } = createRequire(import.meta.resolve('@libos/kernel'))('pg') as {
    Client: { prototype: { query: (this: unknown, ...args: unknown[]) => unknown } };
  };
  const query = Client.prototype.query;
  const sent: string[] = [];
  Client.prototype.query = function counted(this: unknown, ...args: unknown[]) {
    const q = args[0] as string | { text?: string };
    sent.push(typeof q === 'string' ? q : String(q?.text));
    return query.apply(this, args);
  };
  try {
    await fn();
  } finally {
    Client.prototype.query = query;
  }
  return sent;
}

describe.skipIf(unavailable !== null)('[K-15.19] round trips of a unit of work on PostgreSQL', () => {
  let rt: Runtime | undefined;
  afterAll(async () => {
    await rt?.close();
    await dropSchema(schema);
  });

  it('[K-15.19] a warm checked call: BEGIN with its savepoint in one query, no RELEASE, and the call still commits', async () => {
    rt = await openRuntime({ path: url, plugins: [capabilities(), session()] });
    const p = await rt.spawn({ goal: 'round trips', budget: { tool_calls: 100 } });
    await rt.grant(p.pid, 'clock:now', ['read']);
    expect((await rt.call(p.pid, 'get_current_time', {})).ok).toBe(true);
    const sent = await sentDuring(() => rt!.call(p.pid, 'get_current_time', {}));
    expect(sent.filter((q) => /^\s*begin\b/i.test(q))).toEqual([expect.stringMatching(/^begin; savepoint \w+$/)]);
    expect(sent.filter((q) => /^\s*(release|savepoint)\b/i.test(q))).toEqual([]);
    expect(sent.at(-1)).toMatch(/^commit$/i);
    expect((await rt.budget(p.pid)).usage.tool_calls).toBe(2);
  });

  it('[K-15.19] a denied call still commits its failure record, and sends no RELEASE', async () => {
    const p = await rt!.spawn({ goal: 'denied', budget: { tool_calls: 100 } });
    const sent = await sentDuring(() => rt!.call(p.pid, 'get_current_time', {}));
    const denied = await rt!.audit({ pid: p.pid, action: 'tool.call', limit: 10 });
    expect(denied.map((r) => r.decision)).toEqual(['permission_denied']);
    expect(sent.filter((q) => /^\s*release\b/i.test(q))).toEqual([]);
    expect(sent.at(-1)).toMatch(/^commit$/i);
  });
});
