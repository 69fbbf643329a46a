import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer, type Harness } from './internal/testing/harness.js';

// Every JSON body is held to the shared bounds (@libos/sdk JSON_LIMITS) field by field before it is validated or
// used: too deep is a 400 naming the field and the bound, never a 500, and no error reaches the server's log.

let h: Harness;
let reported: unknown[];
beforeEach(async () => {
  reported = [];
  h = await startServer({ onError: (err) => reported.push(err) });
});
afterEach(async () => {
  await h.stop();
});

/** JSON text of `depth` arrays around 1 (built as text: the value would overflow JSON.stringify). */
const nestedText = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

describe('JSON bounds of REST bodies', () => {
  it(`[K-8.6] a message nested 10,000 deep is 400 invalid_arguments naming payload and depth 100; nothing written, nothing \
logged`, async () => {
    const p = await h.rt.spawn({ goal: 'read mail' });
    const events = (await h.rt.events()).length;
    const r = await h.api(`/api/processes/${p.pid}/message`, { raw: `{"payload":${nestedText(10_000)},"interrupt":true}` });
    expect(r).toMatchObject({
      status: 400,
      body: {
        error: {
          code: 'invalid_arguments',
          message: expect.stringMatching(/^payload: nested deeper than 100 levels/),
          details: { field: 'payload', max: 100 },
        },
      },
    });
    expect(await h.rt.messages(p.pid)).toEqual([]);
    expect(await h.rt.events()).toHaveLength(events);
    expect(reported).toEqual([]);
    // The bound itself is accepted.
    expect(await h.api(`/api/processes/${p.pid}/message`, { raw: `{"payload":${nestedText(100)}}` })).toMatchObject({ status: 201 });
  });

  it('[K-8.6] call, spawn and respond bodies nested past the bound are 400 naming their field', async () => {
    const p = await h.rt.spawn({ goal: 'x' });
    const deep = nestedText(10_000);
    const cases: [string, string, string][] = [
      [`/api/processes/${p.pid}/call`, `{"tool":"get_current_time","args":{"x":${deep}}}`, 'args'],
      ['/api/processes', `{"goal":"g","extra":${deep}}`, 'extra'],
      ['/api/human-requests/hr_0000000000000000/respond', `{"approved":true,"answer":${deep}}`, 'answer'],
      ['/api/processes', deep, 'body'],
    ];
    for (const [path, raw, field] of cases) {
      const r = await h.api(path, { raw });
      expect(r, path).toMatchObject({
        status: 400,
        body: { error: { code: 'invalid_arguments', details: { field, limit: 'depth', max: 100 } } },
      });
    }
    expect(await h.rt.processes()).toHaveLength(1);
    expect(reported).toEqual([]);
  });
});
