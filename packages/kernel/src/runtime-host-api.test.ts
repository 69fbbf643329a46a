// The runtime methods a host (the server, the CLI) reads and writes through, instead of the bus, the registry or a
// raw transaction.
import { SERVICE_NAMES, type ProcessService } from '@libos/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { notesPluginWithImage } from './internal/testing/notes-plugin.js';
import { openRuntime, type Runtime } from './runtime.js';
import type { AuditRecord, RuntimeEvent } from './events/event-bus.js';

let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.close();
  rt = null;
});

describe('runtime: the host API', () => {
  it('watch delivers each committed event and audit record until its stop function is called', async () => {
    rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()] });
    const events: RuntimeEvent[] = [];
    const audits: AuditRecord[] = [];
    const stop = rt.watch({ event: (e) => events.push(e), audit: (a) => audits.push(a) });
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'g' });
    expect(events.map((e) => e.type)).toContain('process_created');
    expect(audits.map((a) => a.action)).toContain('process.spawn');
    stop();
    const seen = events.length;
    await rt.signal(p.pid, 'pause');
    expect(events.length).toBe(seen);
  });

  it('lastEventSeq is the newest durable event, 0 for an empty store, and record writes host events and audits', async () => {
    rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()] });
    const first = await rt.lastEventSeq();
    await rt.record({ event: { type: 'host_note', data: { n: 1 } }, audit: { action: 'host.note', target: 'host', decision: 'ok' } });
    const events = await rt.events({ type: 'host_note' });
    expect(events).toHaveLength(1);
    expect(await rt.lastEventSeq()).toBe(events[0]!.seq);
    expect(events[0]!.seq).toBeGreaterThan(first);
    expect(await rt.audit({ action: 'host.note' })).toHaveLength(1);
  });

  it('toolNames lists the registered tools sorted, and readService reads a service as the host', async () => {
    rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()] });
    const names = rt.toolNames();
    expect(names).toEqual([...names].sort());
    expect(names.every((n) => rt!.hasTool(n))).toBe(true);
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'g' });
    const got = await rt.readService<ProcessService, string>(SERVICE_NAMES.processes, async (s) => (await s.get(p.pid)).status);
    expect(got).toBe('runnable');
  });
});

describe('runtime: which services a scope has', () => {
  it('[K-9.15] hasService names the kernel and plugin services only; a name such as toString is none', async () => {
    rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()] });
    await rt.transaction(async (scope) => {
      expect(scope.hasService?.(SERVICE_NAMES.processes)).toBe(true);
      expect(scope.hasService?.(SERVICE_NAMES.objectPins)).toBe(false); // the tasks plugin is not loaded
      expect(scope.hasService?.('toString')).toBe(false);
      expect(() => scope.service('toString')).toThrow(expect.objectContaining({ code: 'not_found' }));
    });
  });
});
