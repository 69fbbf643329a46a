import { UpdateQueryNode, type KyselyPlugin } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { notesPluginWithImage } from '../internal/testing/notes-plugin.js';
import { findProcess } from '../processes/process-store.js';
import { openRuntime, type Runtime } from '../runtime.js';

// The store memo (store-memo.ts) caches hot reads; these check through the public runtime that no cached read ever
// outlives a write or a rollback: every read returns exactly what the store holds.

const open: Runtime[] = [];
afterEach(async () => {
  for (const rt of open.splice(0)) await rt.close();
});

async function notesRuntime() {
  const rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()] });
  open.push(rt);
  const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
  await rt.activateSkill(p.pid, 'test-notes');
  return { rt, pid: p.pid };
}

describe('store memo coherence', () => {
  it('[K-9.3] a process row read again after a host write shows the write; after a rollback, the stored row', async () => {
    const { rt, pid } = await notesRuntime();
    expect((await rt.process(pid)).goal).toBe('x');
    await rt.transaction((scope) => scope.store.updateTable('processes').set({ goal: 'y' }).where('pid', '=', pid).execute());
    expect((await rt.process(pid)).goal).toBe('y');
    const failed = rt.transaction(async (scope) => {
      await scope.store.updateTable('processes').set({ goal: 'z' }).where('pid', '=', pid).execute();
      // Read (and cache) the uncommitted row inside the transaction, then fail it.
      expect((await findProcess(scope.store, pid))?.goal).toBe('z');
      throw new Error('roll it back');
    });
    await expect(failed).rejects.toThrow('roll it back');
    expect((await rt.process(pid)).goal).toBe('y');
  });

  it('[K-9.3] a revoked grant stops the next call at once; a new grant allows it again', async () => {
    const { rt, pid } = await notesRuntime();
    const cap = await rt.grant(pid, 'note:a', ['write']);
    expect((await rt.call(pid, 'note_write', { key: 'a', text: '1' })).ok).toBe(true);
    await rt.revoke(cap.id);
    const refused = await rt.call(pid, 'note_write', { key: 'a', text: '2' });
    expect(!refused.ok && refused.error.code).toBe('permission_denied');
    await rt.grant(pid, 'note:*', ['write']);
    expect((await rt.call(pid, 'note_write', { key: 'b', text: '3' })).ok).toBe(true);
  });

  it('[K-9.3] a call that fails after writing leaves no cached trace: the budget and the tool table read as stored', async () => {
    const { rt, pid } = await notesRuntime();
    await rt.grant(pid, 'note:*', ['write']);
    const before = (await rt.budget(pid)).usage.tool_calls;
    const r = await rt.call(pid, 'note_write_then_fail', { key: 'k' });
    expect(!r.ok && r.error.code).toBe('conflict');
    // The failed run still costs its attempt (one tool call), recorded in its own transaction; nothing else stays.
    expect((await rt.budget(pid)).usage.tool_calls).toBe((before ?? 0) + 1);
    const count = await rt.call(pid, 'note_count', {});
    expect(count).toMatchObject({ ok: true, payload: { count: 0 } });
  });

  it(`[K-9.3] under kyselyPlugins every statement still reaches the store adapter: a write drops the cached read, and a \
plugin's throw fails the transaction with nothing kept`, async () => {
    let blocked = false;
    const kinds = new Set<string>();
    const gate: KyselyPlugin = {
      transformQuery({ node }) {
        kinds.add(node.kind);
        if (blocked && UpdateQueryNode.is(node)) throw new Error('updates are blocked');
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    const rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()], kyselyPlugins: [gate] });
    open.push(rt);
    const { pid } = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    expect([...kinds]).toEqual(expect.arrayContaining(['SelectQueryNode', 'InsertQueryNode']));
    expect((await rt.process(pid)).goal).toBe('x');
    await rt.transaction((scope) => scope.store.updateTable('processes').set({ goal: 'y' }).where('pid', '=', pid).execute());
    expect((await rt.process(pid)).goal).toBe('y');
    blocked = true;
    const failed = rt.transaction(async (scope) => {
      await scope.store.insertInto('libos_meta').values({ key: 'probe', value: '1' }).execute();
      await scope.store.updateTable('processes').set({ goal: 'z' }).where('pid', '=', pid).execute();
    });
    await expect(failed).rejects.toThrow('updates are blocked');
    blocked = false;
    expect((await rt.process(pid)).goal).toBe('y');
    const probe = await rt.transaction((scope) => scope.store.selectFrom('libos_meta').selectAll().where('key', '=', 'probe').execute());
    expect(probe).toEqual([]);
  });
});
