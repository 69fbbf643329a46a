import { wire } from '@libos/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { fingerprint } from '../internal/testing/fingerprint.js';
import { startServer, type Harness } from '../internal/testing/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe('grant and revoke over HTTP', () => {
  it('an HTTP-created process is granted over HTTP (201, audited as the host), calls the tool, loses it on revoke', async () => {
    h = await startServer();
    const { pid } = (await h.api('/api/processes', { json: { goal: 'tell the time' } })).body as { pid: string };
    const initial = (await h.api(`/api/processes/${pid}/capabilities`)).body as { id: string }[];
    const denied = await h.api(`/api/processes/${pid}/call`, { json: { tool: 'get_current_time' } });
    expect(denied.body).toMatchObject({ ok: false, error: { code: 'permission_denied' } });

    const granted = await h.api(`/api/processes/${pid}/grants`, { json: { resource: 'clock:now', rights: ['read'], uses: 5 } });
    expect(granted).toMatchObject({
      status: 201,
      body: { subject: pid, resource: 'clock:now', rights: ['read'], effect: 'allow', uses_remaining: 5 },
    });
    const capId = granted.body.id as string;
    expect((await h.api(`/api/processes/${pid}/capabilities`)).body).toEqual([...initial, expect.objectContaining({ id: capId })]);
    expect((await h.rt.audit({ action: 'capability.issue' })).at(-1)).toMatchObject({ actor: 'host', target: 'clock:now' });
    expect((await h.api(`/api/processes/${pid}/call`, { json: { tool: 'get_current_time' } })).body).toMatchObject({ ok: true });

    expect(await h.api(`/api/capabilities/${capId}/revoke`, { method: 'POST' })).toEqual({ status: 200, body: { revoked: capId } });
    expect((await h.api(`/api/processes/${pid}/capabilities`)).body).toEqual(initial);
    expect((await h.api(`/api/processes/${pid}/call`, { json: { tool: 'get_current_time' } })).body).toMatchObject({
      ok: false,
      error: { code: 'permission_denied' },
    });
  });

  it('a high-risk grant (a meta right, a wildcard or meta resource) needs confirmed: true: 409, audited, nothing granted', async () => {
    h = await startServer();
    const p = await h.rt.spawn({ goal: 'x' });
    const initial = await h.rt.capabilities(p.pid);
    for (const json of [
      { resource: 'object_namespace:*', rights: ['read'] },
      { resource: 'clock:now', rights: ['admin'] },
      { resource: 'capability:*', rights: ['read'] },
    ]) {
      const r = await h.api(`/api/processes/${p.pid}/grants`, { json });
      expect(r).toMatchObject({
        status: 409,
        body: {
          confirmation_required: true,
          action: `grant:${json.resource}`,
          error: { code: 'conflict', details: { confirm_with: { confirmed: true } } },
        },
      });
    }
    expect(await h.rt.capabilities(p.pid)).toEqual(initial);
    expect(await h.rt.audit({ action: 'gui.confirmation_required' })).toHaveLength(3);
    // A deny is never high-risk; a confirmed wildcard grant is issued.
    expect(
      (await h.api(`/api/processes/${p.pid}/grants`, { json: { resource: 'object_namespace:*', rights: ['write'], effect: 'deny' } }))
        .status,
    ).toBe(201);
    const confirmed = await h.api(`/api/processes/${p.pid}/grants`, {
      json: { resource: 'object_namespace:*', rights: ['read'], confirmed: true },
    });
    expect(confirmed).toMatchObject({ status: 201, body: { resource: 'object_namespace:*', effect: 'allow' } });
  });

  it('bad input is 400 naming the field, an unknown pid or capability is 404, and nothing changes', async () => {
    h = await startServer();
    const p = await h.rt.spawn({ goal: 'x' });
    const before = await fingerprint(h.rt);
    const cases: [unknown, string][] = [
      [{ rights: ['read'] }, 'resource'],
      [{ resource: 'clock:now', rights: [] }, 'rights'],
      [{ resource: 'clock:now', rights: ['fly'] }, 'rights.0'],
      [{ resource: 'clock:now', rights: ['read'], uses: 0 }, 'uses'],
      [{ resource: 'clock:now', rights: ['read'], effect: 'maybe' }, 'effect'],
      [{ resource: 'clock:now', rights: ['read'], colour: 'red' }, 'colour'],
    ];
    for (const [json, field] of cases) {
      const r = await h.api(`/api/processes/${p.pid}/grants`, { json });
      expect({ json, status: r.status, field: r.body.error?.details?.field }).toEqual({ json, status: 400, field });
    }
    expect(await h.api('/api/processes/pid_0000000000000000/grants', { json: { resource: 'clock:now', rights: ['read'] } })).toMatchObject({
      status: 404,
      body: { error: { code: 'process_not_found' } },
    });
    expect(await h.api('/api/capabilities/cap_0000000000000000/revoke', { method: 'POST' })).toMatchObject({
      status: 404,
      body: { error: { code: 'capability_not_found' } },
    });
    expect(await fingerprint(h.rt)).toEqual(before);
  });
});

describe('runtime-wide reads', () => {
  it('audit, events, llm calls, objects, skills and tools, each with its filters; an unknown pid filter is 404', async () => {
    h = await startServer();
    const p = await h.rt.spawn({ goal: 'x' });
    await h.rt.grant(p.pid, 'clock:now', ['read']);
    await h.rt.call(p.pid, 'get_current_time', {});
    expect((await h.api(`/api/audit?pid=${p.pid}&action=tool.call`)).body).toEqual(
      (await h.rt.audit({ pid: p.pid, action: 'tool.call' })).map(wire.auditToWire),
    );
    expect((await h.api('/api/audit?limit=2')).body).toHaveLength(2);
    expect((await h.api('/api/events?type=tool_completed')).body).toEqual(
      (await h.rt.events({ type: 'tool_completed' })).map(wire.eventToWire),
    );
    const all = (await h.api('/api/events')).body as { seq: number }[];
    expect((await h.api(`/api/events?after=${all[0]!.seq}&limit=1`)).body).toEqual([all[1]]);
    expect((await h.api(`/api/llm-calls?pid=${p.pid}`)).body).toEqual([]);
    const objects = (await h.api(`/api/objects?pid=${p.pid}`)).body as { owner_id: string }[];
    expect(objects.length).toBeGreaterThan(0);
    expect(objects.every((o) => o.owner_id === p.pid)).toBe(true);
    expect((await h.api('/api/skills')).body).toEqual(h.rt.skillCatalog().map(wire.skillToWire));
    expect((await h.api('/api/tools')).body).toEqual(expect.arrayContaining(['get_current_time', 'process_exit']));
    for (const path of ['/api/audit', '/api/events', '/api/llm-calls', '/api/objects']) {
      expect(await h.api(`${path}?pid=pid_0000000000000000`)).toMatchObject({
        status: 404,
        body: { error: { code: 'process_not_found' } },
      });
    }
    expect(await h.api('/api/events?limit=0')).toMatchObject({ status: 400, body: { error: { details: { field: 'limit' } } } });
  });
});
