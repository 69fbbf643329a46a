import { definePlugin, type EmittedEvent } from '@libos/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { notesPluginWithImage, notesStore } from '../internal/testing/notes-plugin.js';
import { openRuntime, type Runtime } from '../runtime.js';

// PluginHooks.events: a plugin reacts to an event inside the transaction that emitted it, so its reaction commits
// or rolls back with the effect that caused it.

const rts: Runtime[] = [];
afterEach(async () => {
  for (const rt of rts.splice(0)) await rt.close();
});

describe('plugin event hooks', () => {
  it('run in the emitting transaction: kept with a committed call, gone with a failed one', async () => {
    const seen: EmittedEvent[] = [];
    const watcher = definePlugin({
      name: 'test-watcher',
      version: '0.0.0',
      skills: [],
      tools: [],
      hooks: {
        events: {
          note_written: async (scope, event) => {
            seen.push(event);
            await notesStore(scope.store)
              .insertInto('test_notes')
              .values({ key: `echo:${String(event.data.key)}`, text: event.id, pid: null })
              .execute();
          },
        },
      },
    });
    const rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage(), watcher] });
    rts.push(rt);
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'notes' });
    await rt.activateSkill(p.pid, 'test-notes');
    await rt.grant(p.pid, 'note:*', ['write']);
    expect((await rt.call(p.pid, 'note_write', { key: 'a', text: 't' })).ok).toBe(true);
    expect((await rt.call(p.pid, 'note_write_then_fail', { key: 'b' })).ok).toBe(false);
    expect(seen.map((e) => [e.type, e.data.key])).toEqual([
      ['note_written', 'a'],
      ['note_written', 'b'],
    ]);
    const rows = await rt.transaction(async (scope) =>
      notesStore(scope.store).selectFrom('test_notes').select(['key', 'text']).orderBy('key').execute(),
    );
    const eventId = (await rt.events({ type: 'note_written' }))[0]!.id;
    expect(rows).toEqual([
      { key: 'a', text: 't' },
      { key: 'echo:a', text: eventId },
    ]);
  });
});
