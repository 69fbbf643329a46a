import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { serve, type RunningServer } from '@libos/server';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LibosApiError } from './api-error.js';
import { LibosClient, type StreamMessage } from './libos-client.js';

let rt: Runtime;
let server: RunningServer;
let client: LibosClient;

beforeEach(async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), tasks(), session()] });
  server = await serve({ runtime: rt, provider: new ScriptedProvider([[{ tool: 'get_current_time', args: {} }]]) });
  client = new LibosClient({ url: server.url, token: server.token });
});
afterEach(async () => {
  await server.close();
  await rt.close();
});

/** The error a promise rejects with (fails when it resolves). */
async function rejection(p: Promise<unknown>): Promise<LibosApiError> {
  const outcome = await p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(LibosApiError);
  return outcome.error as LibosApiError;
}

describe('LibosClient against a served runtime on 127.0.0.1', () => {
  it('spawns, lists and reads processes with their budget; a tool call answers the broker envelope', async () => {
    expect(await client.health()).toEqual({ ok: true, db: rt.location, provider: 'scripted' });
    const p = await client.spawn({ goal: 'tell the time' });
    expect(p).toMatchObject({ status: 'runnable', goal: 'tell the time', parent_pid: null });
    expect((await client.processes()).map((x) => x.pid)).toEqual([p.pid]);
    expect(await client.processes('exited')).toEqual([]);
    const detail = await client.process(p.pid);
    expect(detail.budget.limits).toMatchObject({ tool_calls: 256 });
    expect(detail.visible_tools).toContain('get_current_time');

    const refused = await client.call(p.pid, 'get_current_time');
    expect(refused).toMatchObject({ ok: false, tool: 'get_current_time', error: { code: 'permission_denied' } });
    await rt.grant(p.pid, 'clock:now', ['read']);
    const ok = await client.call(p.pid, 'get_current_time');
    expect(ok).toMatchObject({ ok: true, tool: 'get_current_time' });
    expect((await client.events(p.pid, { type: 'tool_completed' })).map((e) => e.data.call_id)).toEqual([ok.call_id]);
    const audited = (await client.audit(p.pid, { action: 'tool.call' })).map((a) => a.target);
    expect(audited).toEqual(['tool:get_current_time', 'tool:get_current_time']);
    const clock = expect.objectContaining({ resource: 'clock:now', rights: ['read'] });
    expect(await client.capabilities(p.pid)).toEqual(expect.arrayContaining([clock]));
    const turn = { pid: p.pid, kind: 'turn', executed: ['get_current_time'] };
    expect(await client.runScheduler(1)).toMatchObject({ quanta: 1, results: [turn] });
    expect(await client.llmCalls(p.pid)).toHaveLength(1);
    await rt.activateSkill(p.pid, 'agent-libos-object-memory');
    await rt.call(p.pid, 'create_memory_object', { type: 'plan', name: 'ledger', payload: { secret: 'not listed' } });
    const listed = await client.objects({ pid: p.pid });
    const ledger = listed.find((o) => o.name === 'ledger');
    expect(ledger).toMatchObject({ namespace: `process:${p.pid}`, name: 'ledger', type: 'plan', payload_available: true });
    expect(JSON.stringify(ledger)).not.toContain('not listed');
  });

  it("a refusal throws LibosApiError with the server's status, code and details; the wrong token is 401", async () => {
    const missing = await rejection(client.process('pid_0000000000000000'));
    expect(missing).toMatchObject({ status: 404, code: 'process_not_found', category: 'not_found', confirmation: undefined });
    const bad = await rejection(client.spawn({ goal: '  ' }));
    expect(bad).toMatchObject({ status: 400, code: 'invalid_arguments', details: { field: 'goal' } });
    const stranger = new LibosClient({ url: server.url, token: 'x'.repeat(32) });
    const unauthorized = { status: 401, code: 'permission_denied', details: { reason: 'unauthorized' } };
    expect(await rejection(stranger.health())).toMatchObject(unauthorized);
  });

  it('a high-risk signal is refused with the confirmation to ask for; sent confirmed, it runs', async () => {
    const p = await client.spawn({ goal: 'to be terminated' });
    const refusal = await rejection(client.signal(p.pid, 'terminate', { reason: 'done with it' }));
    expect(refusal).toMatchObject({ status: 409, code: 'conflict' });
    const preview = { pid: p.pid, signal: 'terminate', reason: 'done with it' };
    expect(refusal.confirmation).toMatchObject({ confirmation_required: true, action: 'signal:terminate', preview });
    expect((await client.process(p.pid)).status).toBe('runnable');
    await client.signal(p.pid, 'terminate', { reason: 'done with it', confirmed: true });
    expect((await client.process(p.pid)).status).toBe('killed');
  });

  it('the human queue: a pending question is listed and answered, which wakes its process', async () => {
    const p = await rt.spawn({ goal: 'ask' });
    await rt.grant(p.pid, 'human:owner', ['write']);
    await rt.activateSkill(p.pid, 'agent-libos-child-processes');
    await rt.call(p.pid, 'ask_human', { question: 'Which region?' });
    const [q] = await client.humanRequests({ status: 'pending' });
    expect(q).toMatchObject({ pid: p.pid, kind: 'question', prompt: 'Which region?' });
    expect(await rejection(client.respond(q!.id, { approved: true }))).toMatchObject({ status: 400, details: { field: 'answer' } });
    expect(await client.respond(q!.id, { approved: true, answer: 'north' })).toMatchObject({ id: q!.id, status: 'approved' });
    expect(await client.humanRequests({ status: 'pending' })).toEqual([]);
    expect((await client.process(p.pid)).status).toBe('runnable');
  });

  it('stream() replays the events after a snapshot cursor, then delivers live ones; breaking out closes it', async () => {
    await client.spawn({ goal: 'before the snapshot' });
    const { cursor } = await client.snapshot();
    const second = await rt.spawn({ goal: 'after the snapshot' });
    let third: string | undefined;
    const seen: StreamMessage[] = [];
    const created = () => seen.flatMap((m) => (m.event === 'event.appended' && m.data.type === 'process_created' ? [m.data.pid] : []));
    for await (const m of client.stream({ cursor })) {
      if (m.event === 'audit.appended') continue;
      seen.push(m);
      // The replayed event is in: the next one can only come live.
      if (created().length === 1 && third === undefined) third = (await rt.spawn({ goal: 'while streaming' })).pid;
      if (created().length === 2) break;
    }
    expect(created()).toEqual([second.pid, third]);
    const ids = seen.map((m) => Number(m.id));
    expect(ids[0]).toBeGreaterThan(cursor);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });
});
