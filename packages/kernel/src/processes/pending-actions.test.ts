import type { WaitSpec } from '@libos/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { notesPluginWithImage } from '../internal/testing/notes-plugin.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { completePendingAction, findPendingAction, savePendingAction } from './pending-actions.js';

let rt: Runtime;
beforeEach(async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()] });
});
afterEach(async () => rt.close());

const now = () => new Date().toISOString();
const wait = (id: string): WaitSpec => ({ kind: 'human', request_ids: [id] });
const save = (pid: string, callId: string, tool: string, requestId: string) =>
  rt.transaction((scope) => savePendingAction(scope.store, { pid, callId, tool, args: { n: callId }, wait: wait(requestId) }, now()));
const saved = (pid: string) => rt.transaction((scope) => findPendingAction(scope.store, pid));

describe('savePendingAction', () => {
  it('[K-8.1] never replaces a saved call: a second save is call_already_waiting naming it, and the first stays as it was', async () => {
    const { pid } = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    const token = await save(pid, 'call_first', 'ask_human', 'hreq_1');
    const before = await saved(pid);

    await expect(save(pid, 'call_second', 'note_write', 'hreq_2')).rejects.toMatchObject({
      code: 'call_already_waiting',
      message: expect.stringContaining('call_first (ask_human); it must be resumed first (libos run)'),
      details: { pid, tool: 'note_write', waiting_call_id: 'call_first', waiting_tool: 'ask_human' },
    });
    const after = await saved(pid);
    expect(after).toEqual(before);
    expect(after).toMatchObject({ resumeToken: token, callId: 'call_first', tool: 'ask_human', wait: wait('hreq_1'), status: 'pending' });

    // Once the saved call completes (its own token), the next call may be saved.
    await rt.transaction((scope) => completePendingAction(scope.store, pid, token));
    await save(pid, 'call_second', 'note_write', 'hreq_2');
    expect(await saved(pid)).toMatchObject({ callId: 'call_second', tool: 'note_write' });
  });
});
