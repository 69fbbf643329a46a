import { canonicalJson, sha256Hex } from '@libos/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { notesPluginWithImage } from '../internal/testing/notes-plugin.js';
import { ScriptedProvider } from '../llm/scripted-provider.js';
import { openRuntime, type Runtime } from '../runtime.js';

let rt: Runtime;
beforeEach(async () => {
  rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()] });
});
afterEach(async () => {
  await rt.close();
});

async function notesProcess() {
  const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'write notes' });
  await rt.activateSkill(p.pid, 'test-notes');
  return p;
}

const digestOf = (v: unknown) => sha256Hex(canonicalJson(v));

describe('call pipeline: one args_sha256 per call', () => {
  it('every tool.call audit row of a call, approval_required included, carries the digest of its parsed arguments', async () => {
    const p = await notesProcess();
    await rt.grant(p.pid, 'note:*', ['write'], { effect: 'ask' });
    // `extra` is not part of note_write's input: parsing drops it, so the parsed arguments are {key, text}.
    const parked = await rt.call(p.pid, 'note_write', { key: 'a', text: 'x', extra: 'dropped' });
    expect(parked).toMatchObject({ ok: true, wait: { kind: 'human' } });
    const parsed = { key: 'a', text: 'x' };
    const [asked] = await rt.audit({ pid: p.pid, action: 'tool.call' });
    expect(asked).toMatchObject({
      decision: 'approval_required',
      details: { args_sha256: digestOf(parsed), args_bytes: canonicalJson(parsed).length },
    });
    // The approval stays bound to the tool and its parsed arguments (as before), under its own name.
    const [req] = await rt.humanRequests({ status: 'pending', pid: p.pid });
    expect(req!.details.args_hash).toBe(digestOf({ args: parsed, tool: 'note_write' }));
    expect(asked!.details.approval_hash).toBe(req!.details.args_hash);

    await rt.answerHuman(req!.id, { approved: true });
    const report = await rt.run({ provider: new ScriptedProvider([]), maxQuanta: 1 });
    expect(report.results[0]).toMatchObject({ kind: 'resumed', results: [{ ok: true, payload: { key: 'a' } }] });
    const rows = await rt.audit({ pid: p.pid, action: 'tool.call' });
    expect(rows.map((r) => r.decision)).toEqual(['approval_required', 'ok']);
    expect(rows.map((r) => r.details.args_sha256)).toEqual([digestOf(parsed), digestOf(parsed)]);
  });

  it('a failed run carries the parsed digest; a call refused before its arguments parse names only its raw ones', async () => {
    const p = await notesProcess();
    await rt.call(p.pid, 'note_write', { key: 'b', text: 'y', extra: 1 }); // no grant: permission_denied after parsing
    const unknown = await rt.call(p.pid, 'no_such_tool', { q: 1 });
    expect(!unknown.ok && unknown.error.code).toBe('tool_not_in_process_table');
    const [denied, refused] = await rt.audit({ pid: p.pid, action: 'tool.call' });
    expect(denied).toMatchObject({
      decision: 'permission_denied',
      details: { args_sha256: digestOf({ key: 'b', text: 'y' }), charged: true },
    });
    expect(refused).toMatchObject({
      decision: 'tool_not_in_process_table',
      details: { args_sha256: null, raw_args_sha256: digestOf({ q: 1 }), charged: false },
    });
  });
});
