// Runtime-local payloads among many hosts (issue 15, K-15.15): an Object's payload lives on the host whose runtime
// wrote it. Read from another host, it is `payload_unavailable` naming that host, and it is not marked lost: the
// writing host still reads it. Once that host is gone, the payload is lost as after a reopen.
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, PG_URL, probePostgres } from '../support/postgres.js';

const unavailable = await probePostgres(PG_URL);
const { schema, url } = freshSchema('t_payload');
const open = (id: string, leaseMs: number) =>
  openRuntime({ path: url, plugins: [capabilities(), objectMemory(), session()], host: { id, leaseMs } });

describe.skipIf(unavailable !== null)('[K-15.15] runtime-local payloads on a shared store', () => {
  let a: Runtime;
  let b: Runtime;
  let pid: string;

  beforeAll(async () => {
    a = await open('writer', 1000);
    b = await open('reader', 1000);
    pid = (await a.spawn({ goal: 'keep a plan', budget: { tool_calls: null } })).pid;
    await a.activateSkill(pid, 'agent-libos-object-memory');
    const made = await a.call(pid, 'create_memory_object', { type: 'plan', name: 'plan', payload: { steps: ['a', 'b'] } });
    expect(made.ok, JSON.stringify(made)).toBe(true);
  });

  afterAll(async () => {
    await b?.close();
    await dropSchema(schema);
  });

  it('[K-15.15] read from another host: payload_unavailable naming the writing host; the writer still reads it', async () => {
    const elsewhere = await b.call(pid, 'read_memory_object', { name: 'plan' });
    expect(elsewhere.ok).toBe(false);
    if (elsewhere.ok) return;
    expect(elsewhere.error.code).toBe('payload_unavailable');
    expect(elsewhere.error.message).toContain('runtime-local on host writer');
    const listed = await b.call(pid, 'list_memory_namespace', {});
    expect(listed.ok, JSON.stringify(listed)).toBe(true);
    const here = await a.call(pid, 'read_memory_object', { name: 'plan' });
    expect(here.ok, JSON.stringify(here)).toBe(true);
    expect(JSON.stringify(here.ok && here.payload)).toContain('"steps"');
  });

  it('[K-15.15] once the writing host is gone (no heartbeat for two lease periods), the payload is lost as after a reopen', async () => {
    await a.close({ shutdown: false });
    await new Promise((r) => setTimeout(r, 2300));
    const gone = await b.call(pid, 'read_memory_object', { name: 'plan' });
    expect(gone.ok).toBe(false);
    if (!gone.ok) expect(gone.error.code).toBe('payload_unavailable_after_reopen');
  });
});
