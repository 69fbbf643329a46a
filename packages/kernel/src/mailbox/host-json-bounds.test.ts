import { afterEach, describe, expect, it } from 'vitest';
import { openRuntime, type Runtime } from '../runtime.js';

// The host's entries into the store (rt.sendMessage, rt.call, rt.answerHuman) hold JSON to the same bounds as a
// model's tool call (`JSON_LIMITS` in @libos/sdk): too deep is `invalid_arguments` naming the field and the bound,
// never a stack overflow, and nothing is written.

const open: Runtime[] = [];
afterEach(async () => {
  for (const rt of open.splice(0)) await rt.close();
});

/** `depth` arrays around 1. */
const nested = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

async function processWithMailbox() {
  const rt = await openRuntime({ path: ':memory:' });
  open.push(rt);
  const p = await rt.spawn({ goal: 'read mail' });
  await rt.grant(p.pid, 'skill:agent-libos-child-processes', ['execute']);
  expect(await rt.call(p.pid, 'activate_skill', { skill_id: 'agent-libos-child-processes' })).toMatchObject({ ok: true });
  return { rt, pid: p.pid };
}

/** Everything a refused host call could have written. */
async function written(rt: Runtime, pid: string) {
  return {
    messages: await rt.messages(pid),
    events: (await rt.events()).length,
    audit: (await rt.audit()).length,
    process: await rt.process(pid),
  };
}

describe('host JSON bounds', () => {
  it(`[K-8.6] rt.sendMessage with a payload nested 5,000 deep is invalid_arguments naming payload and depth 100; nothing \
written`, async () => {
    const { rt, pid } = await processWithMailbox();
    const before = await written(rt, pid);
    await expect(rt.sendMessage(pid, nested(5_000))).rejects.toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringMatching(/^payload: nested deeper than 100 levels/),
      details: { field: 'payload', limit: 'depth', max: 100 },
    });
    expect(await written(rt, pid)).toEqual(before);
    // The bound itself is accepted, on the host path as on the tool path.
    await rt.sendMessage(pid, nested(100));
    expect(await rt.call(pid, 'send_process_message', { to_pid: pid, payload: nested(100) })).toMatchObject({ ok: true });
    expect(await rt.call(pid, 'send_process_message', { to_pid: pid, payload: nested(101) })).toMatchObject({
      ok: false,
      error: { code: 'invalid_arguments', details: { field: 'payload', max: 100 } },
    });
  });

  it('[K-8.6] an interrupt nested 1,000 deep is refused and the process is unaffected: its next tool runs, its mail reads', async () => {
    const { rt, pid } = await processWithMailbox();
    await rt.grant(pid, 'skill:*', ['read']);
    await expect(rt.sendMessage(pid, nested(1_000), { delivery: 'interrupt' })).rejects.toMatchObject({
      code: 'invalid_arguments',
      details: { field: 'payload' },
    });
    expect(await rt.messages(pid)).toEqual([]);
    // No unread interrupt stops it: a non-message tool runs, and reading mail works.
    expect(await rt.call(pid, 'discover_skills', {})).toMatchObject({ ok: true });
    await rt.sendMessage(pid, { order: 42 }, { delivery: 'interrupt' });
    const read = await rt.call(pid, 'receive_process_messages', {});
    expect(read).toMatchObject({ ok: true, payload: { messages: [{ payload: { order: 42 } }] } });
    expect(await rt.call(pid, 'discover_skills', {})).toMatchObject({ ok: true });
    expect((await rt.process(pid)).status).toBe('runnable');
  });

  it('[K-8.6] rt.call arguments nested 5,000 deep are refused like a model call, naming the argument and the bound', async () => {
    const { rt, pid } = await processWithMailbox();
    const r = await rt.call(pid, 'send_process_message', { to_pid: pid, payload: nested(5_000) });
    expect(r).toMatchObject({
      ok: false,
      error: { code: 'invalid_arguments', message: expect.stringMatching(/^payload: nested deeper than 100 levels/) },
    });
    expect(await rt.messages(pid)).toEqual([]);
  });

  it('[K-8.6] a host answer is checked before anything is read: a non-string or oversized answer is invalid_arguments', async () => {
    const { rt } = await processWithMailbox();
    await expect(rt.answerHuman('hr_0000000000000000', { approved: true, answer: nested(5_000) as string })).rejects.toMatchObject({
      code: 'invalid_arguments',
      details: { field: 'answer' },
    });
    await expect(rt.answerHuman('hr_0000000000000000', { approved: true, answer: 'x'.repeat(8_001) })).rejects.toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringContaining('8000'),
    });
    await expect(rt.answerHuman('hr_0000000000000000', { approved: true, answer: 'ok' })).rejects.toMatchObject({
      code: 'human_request_not_found',
    });
  });
});
