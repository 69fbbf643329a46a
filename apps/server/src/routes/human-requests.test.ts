import { ScriptedProvider, type Runtime } from '@libos/kernel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fingerprint } from '../internal/testing/fingerprint.js';
import { startServer, type Harness } from '../internal/testing/harness.js';

let h: Harness;
beforeEach(async () => {
  h = await startServer();
});
afterEach(async () => {
  await h.stop();
});

/** A process parked in `ask_human`: the host granted `human:owner` write and activated the child-processes Skill. */
async function askingProcess(rt: Runtime, question = 'Which region?') {
  const p = await rt.spawn({ goal: 'ask the owner' });
  await rt.grant(p.pid, 'human:owner', ['write']);
  await rt.activateSkill(p.pid, 'agent-libos-child-processes');
  const asked = await rt.call(p.pid, 'ask_human', { question });
  expect(asked).toMatchObject({ ok: true, wait: { kind: 'human' } });
  const [req] = await rt.humanRequests({ pid: p.pid });
  return { pid: p.pid, req: req! };
}

/** A process parked in `request_permission` (a standing permission for itself). */
async function requestingProcess(rt: Runtime) {
  const p = await rt.spawn({ goal: 'ask for a permission' });
  await rt.grant(p.pid, 'human:owner', ['write']);
  await rt.activateSkill(p.pid, 'agent-libos-authority');
  const asked = await rt.call(p.pid, 'request_permission', {
    resource: 'object_namespace:team',
    rights: ['write'],
    reason: "I keep the team's notes",
  });
  expect(asked).toMatchObject({ ok: true, wait: { kind: 'human' } });
  const [req] = await rt.humanRequests({ pid: p.pid });
  return { pid: p.pid, req: req! };
}

describe('human requests', () => {
  it('respond answers a pending question and wakes its process; the answer reaches the resumed call', async () => {
    const { pid, req } = await askingProcess(h.rt);
    expect((await h.api('/api/human-requests?status=pending')).body).toEqual([
      expect.objectContaining({ id: req.id, kind: 'question', prompt: 'Which region?', status: 'pending' }),
    ]);
    expect((await h.rt.process(pid)).status).toBe('waiting_human');
    const answered = await h.api(`/api/human-requests/${req.id}/respond`, { json: { approved: true, answer: 'the north coast' } });
    expect(answered).toMatchObject({
      status: 200,
      body: { id: req.id, status: 'approved', response: { approved: true, answer: 'the north coast', responder: 'human:owner' } },
    });
    expect((await h.rt.process(pid)).status).toBe('runnable');
    expect((await h.api('/api/human-requests?status=pending')).body).toEqual([]);
    expect((await h.api(`/api/human-requests?pid=${pid}`)).body).toEqual([expect.objectContaining({ id: req.id, status: 'approved' })]);
    const provider = new ScriptedProvider([]);
    const report = await h.rt.run({ provider, maxQuanta: 1 });
    expect(provider.calls).toBe(0);
    expect(report.results[0]!.results[0]).toMatchObject({
      ok: true,
      tool: 'ask_human',
      payload: { request_id: req.id, status: 'approved', answer: 'the north coast' },
    });
  });

  it('[K-53] responding to a request that is not pending is 409, and changes nothing', async () => {
    const { req } = await askingProcess(h.rt);
    expect((await h.api(`/api/human-requests/${req.id}/respond`, { json: { approved: false } })).status).toBe(200);
    const before = await fingerprint(h.rt);
    const again = await h.api(`/api/human-requests/${req.id}/respond`, { json: { approved: true, answer: 'too late' } });
    expect(again).toMatchObject({
      status: 409,
      body: { error: { code: 'human_request_not_pending', details: { id: req.id, status: 'rejected' } } },
    });
    expect(await h.api(`/api/human-requests/${req.id}/cancel`, { method: 'POST' })).toMatchObject({
      status: 409,
      body: { error: { code: 'human_request_not_pending' } },
    });
    expect(await fingerprint(h.rt)).toEqual(before);
    expect(await h.api('/api/human-requests/hreq_0000000000000000/respond', { json: { approved: false } })).toMatchObject({
      status: 404,
      body: { error: { code: 'human_request_not_found' } },
    });
  });

  it(`[K-53] approve + always_deny and reject + always_allow are 400 before anything changes; a consistent answer installs the \
policy`, async () => {
    const { pid, req } = await requestingProcess(h.rt);
    const before = await fingerprint(h.rt);
    const contradictions = [
      { approved: true, decision: { policy: 'always_deny' } },
      { approved: false, decision: { policy: 'always_allow' } },
      { approved: true, decision: { policy: 'sometimes' } },
      { approved: true, decision: 'always_allow' },
    ];
    for (const body of contradictions) {
      const r = await h.api(`/api/human-requests/${req.id}/respond`, { json: body });
      expect({ body, status: r.status, code: r.body.error?.code, field: r.body.error?.details?.field }).toEqual({
        body,
        status: 400,
        code: 'invalid_arguments',
        field: typeof body.decision === 'string' ? 'decision' : 'decision.policy',
      });
    }
    expect(await fingerprint(h.rt)).toEqual(before);
    const ok = await h.api(`/api/human-requests/${req.id}/respond`, { json: { approved: true, decision: { policy: 'always_allow' } } });
    expect(ok).toMatchObject({ status: 200, body: { status: 'approved', response: { decision: 'always_allow' } } });
    expect(await h.rt.capabilities(pid)).toEqual(
      expect.arrayContaining([expect.objectContaining({ effect: 'allow', resource: 'object_namespace:team', rights: ['write'] })]),
    );
    expect((await h.rt.process(pid)).status).toBe('runnable');
  });

  it('an approved question needs a non-empty answer, and a question takes no policy: 400, nothing changes', async () => {
    const { req } = await askingProcess(h.rt);
    const before = await fingerprint(h.rt);
    for (const [body, field] of [
      [{ approved: true }, 'answer'],
      [{ approved: true, answer: '   ' }, 'answer'],
      [{ approved: true, answer: 'north', decision: { policy: 'ask_each_time' } }, 'decision'],
      [{ approved: true, answer: 'north', extra: 1 }, 'extra'],
    ] as const) {
      const r = await h.api(`/api/human-requests/${req.id}/respond`, { json: body });
      expect({ body, status: r.status, field: r.body.error?.details?.field }).toEqual({ body, status: 400, field });
    }
    expect(await h.api(`/api/human-requests/${req.id}/respond`, { raw: '{"approved": tru' })).toMatchObject({
      status: 400,
      body: { error: { details: { field: 'body' } } },
    });
    expect(await fingerprint(h.rt)).toEqual(before);
  });

  it('cancel settles a pending request as cancelled and wakes its process', async () => {
    const { pid, req } = await askingProcess(h.rt);
    const r = await h.api(`/api/human-requests/${req.id}/cancel`, { json: { reason: 'nobody is around' } });
    expect(r).toMatchObject({ status: 200, body: { id: req.id, status: 'cancelled', response: { reason: 'nobody is around' } } });
    expect((await h.rt.process(pid)).status).toBe('runnable');
    expect(await h.api('/api/human-requests?status=maybe')).toMatchObject({
      status: 400,
      body: { error: { details: { field: 'status' } } },
    });
  });
});
