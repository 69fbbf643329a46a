import { tmpdir } from 'node:os';
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

describe('processes', () => {
  it('POST /api/processes spawns a root process (201); GET lists it and shows it with its budget', async () => {
    const created = await h.api('/api/processes', { json: { goal: 'Keep a ledger' } });
    expect(created).toMatchObject({
      status: 201,
      body: { image_id: 'base-agent:v0', status: 'runnable', goal: 'Keep a ledger', parent_pid: null },
    });
    const pid = created.body.pid as string;
    expect(await h.rt.process(pid)).toMatchObject({ status: 'runnable' });
    const list = await h.api('/api/processes');
    expect(list.body.map((p: { pid: string }) => p.pid)).toEqual([pid]);
    expect((await h.api('/api/processes?status=exited')).body).toEqual([]);
    const one = await h.api(`/api/processes/${pid}`);
    expect(one).toMatchObject({ status: 200, body: { pid, budget: { usage: expect.any(Object), limits: expect.any(Object) } } });
    expect(await h.api('/api/processes/pid_0000000000000000')).toMatchObject({
      status: 404,
      body: { error: { code: 'process_not_found' } },
    });
    expect(await h.api('/api/processes', { json: { goal: 'x', image: 'no-such:v0' } })).toMatchObject({
      status: 404,
      body: { error: { code: 'image_not_found' } },
    });
  });

  it('POST /api/processes takes budget limits and an absolute working directory; a relative one or an unknown limit is 400', async () => {
    const r = await h.api('/api/processes', {
      json: { goal: 'bounded', budget: { tool_calls: 7, llm_calls: null }, working_directory: tmpdir() },
    });
    expect(r.status).toBe(201);
    expect((await h.api(`/api/processes/${r.body.pid}`)).body).toMatchObject({ budget: { limits: { tool_calls: 7 } } });
    expect(await h.api('/api/processes', { json: { goal: 'x', working_directory: 'relative/dir' } })).toMatchObject({
      status: 400,
      body: { error: { details: { field: 'working_directory' } } },
    });
    expect(await h.api('/api/processes', { json: { goal: 'x', budget: { wishes: 3 } } })).toMatchObject({
      status: 400,
      body: { error: { details: { field: 'budget.wishes' } } },
    });
  });

  it('POST /api/processes/:pid/call runs one tool through the broker and answers its envelope, refusals included', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    await h.rt.grant(p.pid, 'clock:now', ['read']);
    const ok = await h.api(`/api/processes/${p.pid}/call`, { json: { tool: 'get_current_time', args: {} } });
    expect(ok).toMatchObject({ status: 200, body: { ok: true, tool: 'get_current_time', call_id: expect.any(String) } });
    expect(await h.rt.events({ pid: p.pid, type: 'tool_completed' })).toHaveLength(1);
    // A tool outside the process's table: the broker refuses it; the HTTP request itself succeeded.
    const refused = await h.api(`/api/processes/${p.pid}/call`, { json: { tool: 'no_such_tool' } });
    expect(refused).toMatchObject({ status: 200, body: { ok: false, error: { code: 'tool_not_in_process_table' } } });
    // Authority applies: spawning a child needs process:spawn write, which this process does not hold.
    const denied = await h.api(`/api/processes/${p.pid}/call`, { json: { tool: 'spawn_child_process', args: { goal: 'child' } } });
    expect(denied).toMatchObject({ status: 200, body: { ok: false, error: { category: 'permission_denied' } } });
    expect(await h.rt.processes()).toHaveLength(1);
  });

  it('[K-53] an unconfirmed process_exit is 409 confirmation_required with a preview and an audit row; confirmed, it exits', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    const before = await h.rt.process(p.pid);
    const refused = await h.api(`/api/processes/${p.pid}/call`, { json: { tool: 'process_exit', args: { message: 'done' } } });
    expect(refused).toMatchObject({
      status: 409,
      body: {
        confirmation_required: true,
        action: 'tool:process_exit',
        preview: { pid: p.pid, tool: 'process_exit', args: { message: 'done' } },
        error: { code: 'conflict', details: { confirmation_required: true, confirm_with: { confirmed: true } } },
      },
    });
    expect(await h.rt.process(p.pid)).toEqual(before);
    const audit = await h.rt.audit({ action: 'gui.confirmation_required' });
    expect(audit).toEqual([
      expect.objectContaining({
        actor: 'host',
        target: `process:${p.pid}`,
        decision: 'confirmation_required',
        details: expect.objectContaining({
          via: 'http',
          action: 'tool:process_exit',
          args_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        }),
      }),
    ]);
    expect(JSON.stringify(audit[0]!.details)).not.toContain('done');
    // `confirmed: false` is no confirmation either.
    expect((await h.api(`/api/processes/${p.pid}/call`, { json: { tool: 'process_exit', args: {}, confirmed: false } })).status).toBe(409);
    const exited = await h.api(`/api/processes/${p.pid}/call`, {
      json: { tool: 'process_exit', args: { message: 'done' }, confirmed: true },
    });
    expect(exited).toMatchObject({ status: 200, body: { ok: true } });
    expect((await h.rt.process(p.pid)).status).toBe('exited');
  });

  it(`[K-53] exec_process and a child cancel/terminate through signal_child_process need confirmation too; a child pause does \
not`, async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    const child = await h.rt.spawn({ goal: 'child', parentPid: p.pid });
    await h.rt.activateSkill(p.pid, 'agent-libos-child-processes');
    for (const [tool, args] of [
      ['exec_process', { image: 'base-agent:v0' }],
      ['signal_child_process', { child_pid: child.pid, signal: 'terminate' }],
      ['signal_child_process', { child_pid: child.pid, signal: 'cancel' }],
    ] as const) {
      const r = await h.api(`/api/processes/${p.pid}/call`, { json: { tool, args } });
      expect({ tool, status: r.status, action: r.body.action }).toEqual({ tool, status: 409, action: `tool:${tool}` });
    }
    expect(await h.rt.audit({ action: 'gui.confirmation_required' })).toHaveLength(3);
    expect((await h.rt.process(child.pid)).status).toBe('runnable');
    const paused = await h.api(`/api/processes/${p.pid}/call`, {
      json: { tool: 'signal_child_process', args: { child_pid: child.pid, signal: 'pause' } },
    });
    expect(paused).toMatchObject({ status: 200, body: { ok: true, payload: { status: 'paused' } } });
  });

  it('[K-53] POST /signal: pause and resume as they are; an unconfirmed terminate is 409 + audit, a confirmed one kills', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    expect(await h.api(`/api/processes/${p.pid}/signal`, { json: { signal: 'pause' } })).toMatchObject({
      status: 200,
      body: { status: 'paused' },
    });
    expect(await h.api(`/api/processes/${p.pid}/signal`, { json: { signal: 'pause' } })).toMatchObject({
      status: 409,
      body: { error: { code: 'invalid_state' } },
    });
    expect(await h.api(`/api/processes/${p.pid}/signal`, { json: { signal: 'resume' } })).toMatchObject({
      status: 200,
      body: { status: 'runnable' },
    });
    const refused = await h.api(`/api/processes/${p.pid}/signal`, { json: { signal: 'terminate', reason: 'stuck' } });
    expect(refused).toMatchObject({
      status: 409,
      body: { confirmation_required: true, action: 'signal:terminate', preview: { pid: p.pid, signal: 'terminate', reason: 'stuck' } },
    });
    expect(await h.rt.audit({ action: 'gui.confirmation_required' })).toEqual([
      expect.objectContaining({ target: `process:${p.pid}`, details: expect.objectContaining({ action: 'signal:terminate' }) }),
    ]);
    expect((await h.rt.process(p.pid)).status).toBe('runnable');
    const killed = await h.api(`/api/processes/${p.pid}/signal`, { json: { signal: 'terminate', reason: 'stuck', confirmed: true } });
    expect(killed).toMatchObject({ status: 200, body: { status: 'killed', outcome: { kind: 'killed', code: 'terminated' } } });
  });

  it('POST /message posts a human message (201) the process can read; interrupt delivery and a channel are kept', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    const sent = await h.api(`/api/processes/${p.pid}/message`, { json: { payload: { text: 'hello' }, channel: 'ops', interrupt: true } });
    expect(sent).toMatchObject({ status: 201, body: { sender: 'human:owner', channel: 'ops', delivery: 'interrupt' } });
    const [m] = await h.rt.messages(p.pid);
    expect(m).toMatchObject({ messageId: sent.body.message_id, channel: 'ops', delivery: 'interrupt' });
    const listed = await h.api(`/api/processes/${p.pid}/messages?unread=true`);
    expect(listed.body.map((x: { message_id: string }) => x.message_id)).toEqual([sent.body.message_id]);
  });

  it('[K-53] malformed bodies are 400 naming the field, and nothing changes', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    const before = await fingerprint(h.rt);
    const cases: [string, { json?: unknown; raw?: string }, string][] = [
      ['/api/processes', { raw: '{"goal": ' }, 'body'],
      ['/api/processes', { json: {} }, 'goal'],
      ['/api/processes', { json: { goal: '   ' } }, 'goal'],
      ['/api/processes', { json: { goal: 'x', imag: 'typo' } }, 'imag'],
      ['/api/processes', { json: ['goal'] }, 'body'],
      [`/api/processes/${p.pid}/call`, { raw: 'not json' }, 'body'],
      [`/api/processes/${p.pid}/call`, { json: { args: {} } }, 'tool'],
      [`/api/processes/${p.pid}/call`, { json: { tool: 'process_exit', args: [], confirmed: true } }, 'args'],
      [`/api/processes/${p.pid}/call`, { json: { tool: 'process_exit', confirmed: 'yes' } }, 'confirmed'],
      [`/api/processes/${p.pid}/message`, { json: { channel: 'ops' } }, 'payload'],
      [`/api/processes/${p.pid}/message`, { json: { payload: 'x', from: 'mallory' } }, 'from'],
      [`/api/processes/${p.pid}/message`, { json: { payload: 'x', channel: 'has spaces' } }, 'channel'],
      [`/api/processes/${p.pid}/signal`, { json: { signal: 'interrupt' } }, 'signal'],
      [`/api/processes/${p.pid}/signal`, { json: { signal: 'terminate', confirm: true } }, 'confirm'],
      ['/api/scheduler/run', { json: { max_quanta: 0 } }, 'max_quanta'],
      ['/api/human-requests/hreq_0000000000000000/respond', { json: { approved: 'yes' } }, 'approved'],
    ];
    for (const [path, init, field] of cases) {
      const r = await h.api(path, init);
      expect({ path, init, status: r.status, code: r.body.error?.code, field: r.body.error?.details?.field }).toEqual({
        path,
        init,
        status: 400,
        code: 'invalid_arguments',
        field,
      });
      expect(r.body.error.message).toContain(`${field}:`);
    }
    expect(await fingerprint(h.rt)).toEqual(before);
  });

  it('bad query parameters are 400; the read routes 404 an unknown pid', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    expect(await h.api(`/api/processes/${p.pid}/events?limit=0`)).toMatchObject({
      status: 400,
      body: { error: { details: { field: 'limit' } } },
    });
    expect(await h.api(`/api/processes/${p.pid}/audit?after=-1`)).toMatchObject({
      status: 400,
      body: { error: { details: { field: 'after' } } },
    });
    expect(await h.api(`/api/processes/${p.pid}/events?colour=red`)).toMatchObject({
      status: 400,
      body: { error: { details: { field: 'colour' } } },
    });
    expect(await h.api('/api/processes?status=sleeping')).toMatchObject({ status: 400, body: { error: { details: { field: 'status' } } } });
    for (const view of ['messages', 'llm-calls', 'audit', 'events', 'capabilities', 'human-requests']) {
      const r = await h.api(`/api/processes/pid_0000000000000000/${view}`);
      expect({ view, status: r.status, code: r.body.error?.code }).toEqual({ view, status: 404, code: 'process_not_found' });
    }
  });

  it('the read routes show what the process did: events, audit, capabilities, llm calls, human requests', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    await h.rt.grant(p.pid, 'clock:now', ['read']);
    await h.rt.call(p.pid, 'get_current_time', {});
    const events = await h.api(`/api/processes/${p.pid}/events`);
    expect(events.body.map((e: { type: string }) => e.type)).toEqual(
      expect.arrayContaining(['process_created', 'tool_called', 'tool_completed']),
    );
    const after = events.body[0].seq as number;
    expect((await h.api(`/api/processes/${p.pid}/events?after=${after}&limit=1`)).body).toEqual([events.body[1]]);
    expect((await h.api(`/api/processes/${p.pid}/events?type=tool_completed`)).body).toHaveLength(1);
    const audit = await h.api(`/api/processes/${p.pid}/audit?action=tool.call`);
    expect(audit.body).toEqual([expect.objectContaining({ actor: p.pid, action: 'tool.call', target: 'tool:get_current_time' })]);
    expect((await h.api(`/api/processes/${p.pid}/capabilities`)).body).toEqual(
      expect.arrayContaining([expect.objectContaining({ subject: p.pid, resource: 'clock:now', rights: ['read'] })]),
    );
    expect((await h.api(`/api/processes/${p.pid}/llm-calls`)).body).toEqual([]);
    expect((await h.api(`/api/processes/${p.pid}/human-requests?status=pending`)).body).toEqual([]);
  });

  it('a body over 1 MiB is 400 payload_too_large; a closed runtime is 503 store_closed (errors keep their category)', async () => {
    const big = await h.api('/api/processes', { json: { goal: 'x'.repeat(1024 * 1024 + 1) } });
    expect(big).toMatchObject({ status: 400, body: { error: { code: 'payload_too_large', details: { field: 'body' } } } });
    expect(await h.rt.processes()).toEqual([]);
    await h.rt.close();
    expect(await h.api('/api/processes')).toMatchObject({
      status: 503,
      body: { error: { code: 'store_closed', category: 'unavailable' } },
    });
  });
});
