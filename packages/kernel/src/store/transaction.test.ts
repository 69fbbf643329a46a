import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRuntime, type Runtime } from '../runtime.js';

let rt: Runtime;
beforeEach(async () => {
  rt = await openRuntime({ path: ':memory:' });
});
afterEach(async () => {
  await rt.close();
});

describe('event and audit sinks of a scope', () => {
  it('[K-9.21] data that is not JSON rejects its emit or record and buffers nothing; the other rows commit', async () => {
    await rt.transaction(async (scope) => {
      await expect(scope.events.emit('bad_event', { n: 1n })).rejects.toThrow(/BigInt/);
      await expect(scope.audit.record({ action: 'bad.audit', details: { n: 2n } })).rejects.toThrow(/BigInt/);
      await scope.events.emit('kept_event', { ok: true });
      await scope.audit.record({ action: 'kept.audit', details: { ok: true } });
    });
    expect((await rt.events({ type: 'bad_event' })).length).toBe(0);
    expect((await rt.events({ type: 'kept_event' })).map((e) => e.data)).toEqual([{ ok: true }]);
    expect((await rt.audit({ action: 'bad.audit' })).length).toBe(0);
    expect((await rt.audit({ action: 'kept.audit' })).map((r) => r.details)).toEqual([{ ok: true }]);
  });
});
