import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { session } from '@libos/session';
import { afterEach, expect, it } from 'vitest';

let rt: Runtime;
let now = Date.parse('2026-11-30T12:00:00Z');
afterEach(async () => rt.close());

async function proc() {
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), session()], config: { clock: { now: () => new Date(now) } } });
  const p = await rt.spawn({ goal: 'tell the time' });
  return p.pid;
}

it(`[S-C1] [S-C3] get_current_time needs clock:now read and returns iso8601 with an explicit offset, unix seconds and the zone as \
given`, async () => {
  const pid = await proc();
  await rt.grant(pid, 'clock:now', ['read']);
  expect(await rt.call(pid, 'get_current_time', { timezone: 'UTC' })).toMatchObject({
    ok: true,
    payload: { iso8601: '2026-11-30T12:00:00+00:00', unix_seconds: now / 1000, timezone: 'UTC' },
  });
  expect(await rt.call(pid, 'get_current_time', { timezone: 'Asia/Shanghai' })).toMatchObject({
    ok: true,
    payload: { iso8601: '2026-11-30T20:00:00+08:00', timezone: 'Asia/Shanghai' },
  });
  expect(await rt.call(pid, 'get_current_time', {})).toMatchObject({ ok: true, payload: { timezone: 'UTC' } });
  // Each read is evidenced: the audit primitive.clock.now and an external_read event, both on clock:now.
  const audits = await rt.audit({ pid, action: 'primitive.clock.now' });
  expect(audits.map((a) => [a.target, a.decision, a.details.timezone])).toEqual([
    ['clock:now', 'ok', 'UTC'],
    ['clock:now', 'ok', 'Asia/Shanghai'],
    ['clock:now', 'ok', 'UTC'],
  ]);
  expect(audits[1]!.details).toMatchObject({ iso8601: '2026-11-30T20:00:00+08:00', unix_seconds: now / 1000 });
  const events = await rt.events({ pid, type: 'external_read' });
  expect(events.map((e) => e.data)).toEqual([
    {
      pid,
      target: 'clock:now',
      adapter: 'clock',
      operation: 'now',
      iso8601: '2026-11-30T12:00:00+00:00',
      unix_seconds: now / 1000,
      timezone: 'UTC',
    },
    {
      pid,
      target: 'clock:now',
      adapter: 'clock',
      operation: 'now',
      iso8601: '2026-11-30T20:00:00+08:00',
      unix_seconds: now / 1000,
      timezone: 'Asia/Shanghai',
    },
    {
      pid,
      target: 'clock:now',
      adapter: 'clock',
      operation: 'now',
      iso8601: '2026-11-30T12:00:00+00:00',
      unix_seconds: now / 1000,
      timezone: 'UTC',
    },
  ]);
});

it('[S-C4] [S-C5] an unknown zone fails with invalid_timezone before any authority check', async () => {
  const pid = await proc();
  const r = await rt.call(pid, 'get_current_time', { timezone: 'Mars/Olympus' });
  expect(r).toMatchObject({ ok: false, error: { code: 'invalid_timezone' } });
  expect(!r.ok && r.error.message).toContain('unknown timezone');
  expect(await rt.audit({ pid, action: 'capability.authorize' })).toEqual([]);
  expect(await rt.audit({ pid, action: 'primitive.clock.now' })).toEqual([]);
});

it('[S-C12] a non-finite sleep is refused as not finite before any authority check: no grant is asked, nothing waits', async () => {
  const pid = await proc();
  for (const seconds of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
    const r = await rt.call(pid, 'sleep', { seconds });
    expect(r).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect(!r.ok && r.error.message).toContain('seconds: ');
    expect(!r.ok && r.error.message).toContain('not a finite number');
  }
  expect(await rt.audit({ pid, action: 'capability.authorize' })).toEqual([]);
  expect((await rt.process(pid)).status).toBe('runnable');
});

it('[S-C6] [S-C7] without clock:now it is permission_denied naming clock:now; a one-use grant allows exactly one read', async () => {
  const pid = await proc();
  const denied = await rt.call(pid, 'get_current_time', {});
  expect(denied).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
  expect(!denied.ok && denied.error.message).toContain('clock:now');
  await rt.grant(pid, 'clock:now', ['read'], { uses: 1 });
  expect((await rt.call(pid, 'get_current_time', {})).ok).toBe(true);
  expect(await rt.call(pid, 'get_current_time', {})).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
});

it('[S-C22] wall clock, read afresh: a clock set back 10 s reads 10 s lower', async () => {
  const pid = await proc();
  await rt.grant(pid, 'clock:now', ['read']);
  const a = (await rt.call(pid, 'get_current_time', {})) as { payload: { unix_seconds: number } };
  now -= 10_000;
  const b = (await rt.call(pid, 'get_current_time', {})) as { payload: { unix_seconds: number; iso8601: string } };
  expect(a.payload.unix_seconds - b.payload.unix_seconds).toBe(10);
  expect(Date.parse(b.payload.iso8601) / 1000).toBe(b.payload.unix_seconds);
});
