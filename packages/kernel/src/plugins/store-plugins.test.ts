import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { definePlugin, type Plugin } from '@libos/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { notesPlugin, notesPluginWithImage } from '../internal/testing/notes-plugin.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { recordedPlugins } from './store-plugins.js';

// A store records the plugins it was opened with; a later open without one that a live process needs fails at open,
// naming the plugin and the processes, and changes nothing (docs/behaviour/kernel.md, "Plugins a store needs").

const dirs: string[] = [];
const open: Runtime[] = [];
afterEach(async () => {
  for (const rt of open.splice(0)) await rt.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDb(): string {
  const d = mkdtempSync(join(tmpdir(), 'libos-store-plugins-'));
  dirs.push(d);
  return join(d, 'libos.db');
}
async function at(path: string, plugins: Plugin[], nowIso?: string): Promise<Runtime> {
  const rt = await openRuntime({ path, plugins, ...(nowIso ? { config: { clock: { now: () => new Date(nowIso) } } } : {}) });
  open.push(rt);
  return rt;
}
async function closeAll() {
  for (const rt of open.splice(0)) await rt.close();
}

describe('plugins a store needs', () => {
  it('[K-56] a process that activated a plugin Skill makes its store refuse a runtime without that plugin, naming both', async () => {
    const db = tempDb();
    const rt = await at(db, [notesPlugin()]);
    const user = await rt.spawn({ goal: 'uses notes' });
    const bystander = await rt.spawn({ goal: 'does not' });
    await rt.activateSkill(user.pid, 'test-notes');
    const before = await rt.processes();
    const auditBefore = (await rt.audit({ limit: 10_000 })).length;
    await closeAll();

    const err = await openRuntime({ path: db, plugins: [] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'plugin_missing', category: 'unavailable' });
    const e = err as { message: string; details: { missing_plugins: unknown[]; processes: unknown[] } };
    expect(e.message).toContain(`test-notes 0.0.0 (needed by ${user.pid})`);
    expect(e.message).not.toContain(bystander.pid);
    expect(e.details.missing_plugins).toEqual([{ name: 'test-notes', version: '0.0.0', processes: [user.pid] }]);
    expect(e.details.processes).toEqual([
      {
        pid: user.pid,
        status: 'runnable',
        image: null,
        skills: ['test-notes'],
        tools: ['note_write', 'note_write_then_fail', 'note_write_then_crash', 'note_count'],
      },
    ]);

    // Nothing was marked failed or swept: with the plugin, the store opens as it was left.
    const again = await at(db, [notesPlugin()]);
    expect(await again.processes()).toEqual(before);
    expect((await again.audit({ limit: 10_000 })).length).toBe(auditBefore);
    expect(await again.call(user.pid, 'note_count', {})).toMatchObject({ ok: true, payload: { count: 0 } });
  });

  it("[K-56] a process of a plugin's image needs the plugin too; one that ended needs nothing", async () => {
    const db = tempDb();
    const rt = await at(db, [notesPluginWithImage()]);
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    await closeAll();
    await expect(openRuntime({ path: db })).rejects.toMatchObject({
      code: 'plugin_missing',
      details: { processes: [expect.objectContaining({ pid: p.pid, image: 'notes-agent:v0' })] },
    });
    const rt2 = await at(db, [notesPluginWithImage()]);
    await rt2.signal(p.pid, 'terminate');
    await closeAll();
    const rt3 = await at(db, []);
    expect((await rt3.process(p.pid)).status).toBe('killed');
  });

  it('the store records each plugin with its version and what it contributes; an unchanged open writes nothing new', async () => {
    const db = tempDb();
    await at(db, [notesPluginWithImage()], '2030-01-01T00:00:00.000Z');
    await closeAll();
    const rt = await at(db, [notesPluginWithImage()], '2031-01-01T00:00:00.000Z');
    const stamps = await rt.transaction(async (scope) =>
      scope.store.selectFrom('libos_plugins').select(['first_loaded_at', 'last_loaded_at']).where('name', '=', 'test-notes').execute(),
    );
    expect(stamps).toEqual([{ first_loaded_at: '2030-01-01T00:00:00.000Z', last_loaded_at: '2030-01-01T00:00:00.000Z' }]);
    const rows = await rt.transaction(async (scope) => recordedPlugins(scope.store));
    expect(rows.find((r) => r.name === 'test-notes')).toEqual({
      name: 'test-notes',
      version: '0.0.0',
      skills: ['test-notes'],
      tools: ['note_write', 'note_write_then_fail', 'note_write_then_crash', 'note_count'],
      images: ['notes-agent:v0'],
    });
    expect(rows.map((r) => r.name)).toContain('@libos/kernel:skill-navigation');
    await closeAll();
    // A newer version is recorded on the next open.
    const newer = definePlugin({ ...notesPluginWithImage(), version: '0.0.1' });
    const rt2 = await at(db, [newer]);
    expect((await rt2.transaction(async (scope) => recordedPlugins(scope.store))).find((r) => r.name === 'test-notes')?.version).toBe(
      '0.0.1',
    );
  });
});
