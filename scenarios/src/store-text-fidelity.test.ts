// Text a JavaScript string can hold is kept exactly by the store, on both dialects (K-15.17). On PostgreSQL a NUL, an
// unpaired surrogate and the JSON escapes of either cannot be stored as they are; the adapter escapes them on the way
// in and back on the way out (packages/kernel/src/store/postgres/text-escapes.ts). The `postgres` project runs this
// file on a PostgreSQL schema; the `sqlite` project on SQLite, where they are stored as they are.
import { afterEach, describe, expect, it } from 'vitest';
import { ok, openHarness, spawnProbe, type Harness } from './support/kernel-harness.js';

/** Strings PostgreSQL refuses or would change, beside ones that only look like them. */
const HOSTILE = [
  'a\u0000b',
  '\ud800',
  'x\udc00',
  '\udbff\udfff paired',
  '\uffff',
  '\uffff0000',
  '\uffffu0000',
  '\\u0000 as text',
  '\\\\ud800 escaped backslash',
  'emoji \u{1F600}',
];

let h: Harness | undefined;
afterEach(async () => {
  await h?.rt.close();
  h = undefined;
});

describe('the store keeps text exactly', () => {
  it('[K-15.17] NUL, lone surrogates, U+FFFF and escape-like text in a message, event and audit row read back unchanged', async () => {
    h = await openHarness();
    const { rt } = h;
    const pid = await spawnProbe(rt, 'text');
    const payload = { list: HOSTILE, ...Object.fromEntries(HOSTILE.map((s, i) => [`k${i}${s}`, s])) };
    await ok(rt, pid, 'send_process_message', { to_pid: pid, payload });
    expect((await rt.messages(pid)).map((m) => m.payload)).toEqual([payload]);

    const before = await rt.lastEventSeq();
    await rt.record({
      event: { type: 'text_fidelity', data: { pid, payload } },
      audit: { action: 'text.fidelity', target: `note:${HOSTILE[0]}`, details: payload },
    });
    const [event] = await rt.events({ after: before, type: 'text_fidelity' });
    expect(event?.data).toEqual({ pid, payload });
    const [row] = (await rt.audit({ action: 'text.fidelity' })).slice(-1);
    expect(row).toMatchObject({ target: `note:${HOSTILE[0]}`, details: payload });
  });
});
