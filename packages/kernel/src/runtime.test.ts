import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { NOTES_IMAGE_TOOLS, notesPluginWithImage } from './internal/testing/notes-plugin.js';
import { openRuntime, type Runtime } from './runtime.js';

const open: Runtime[] = [];
const dirs: string[] = [];
async function runtimeAt(path: string) {
  const rt = await openRuntime({ path, plugins: [notesPluginWithImage()] });
  open.push(rt);
  return rt;
}
function tempDb() {
  const d = mkdtempSync(join(tmpdir(), 'libos-kernel-'));
  dirs.push(d);
  return join(d, 'libos.db');
}
afterEach(async () => {
  for (const rt of open.splice(0)) await rt.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('runtime: spawn, skills and tool tables', () => {
  it('[K-1] spawn makes a runnable root whose tool table is the image default tools, with event and audit', async () => {
    const rt = await runtimeAt(':memory:');
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'write notes' });
    expect(p).toMatchObject({ status: 'runnable', parentPid: null, imageId: 'notes-agent:v0', goal: 'write notes', stateGeneration: 1 });
    expect(p.pid).toMatch(/^pid_[0-9a-f]{16}$/);
    expect(p.toolTable).toEqual(NOTES_IMAGE_TOOLS);
    expect(Object.keys(p.loadedSkills)).toEqual(['agent-libos-skill-navigation']);
    expect(p.visibleTools).toEqual(['activate_skill', 'discover_skills', 'unload_skill']);
    expect((await rt.events({ type: 'process_created' })).map((e) => e.data.pid)).toEqual([p.pid]);
    expect((await rt.audit({ action: 'process.spawn' }))[0]).toMatchObject({ target: `process:${p.pid}`, decision: 'ok' });
  });

  it('[K-2] spawning an unknown image fails and leaves no row', async () => {
    const rt = await runtimeAt(':memory:');
    await expect(rt.spawn({ image: 'ghost:v9', goal: 'x' })).rejects.toMatchObject({ code: 'image_not_found' });
    expect(await rt.processes()).toEqual([]);
  });

  it('base-agent:v0 declares its tools exactly: only tools of loaded plugins, nothing added', async () => {
    const rt = await runtimeAt(':memory:');
    const p = await rt.spawn({ goal: 'x' });
    expect(p.imageId).toBe('base-agent:v0');
    // The image lists object-memory, session, task and authority tools too; none of those plugins is loaded here.
    expect(p.toolTable).toEqual([
      'discover_skills',
      'activate_skill',
      'unload_skill',
      'spawn_child_process',
      'fork_child_process',
      'wait_child_process',
      'signal_child_process',
      'send_process_message',
      'receive_process_messages',
      'read_process_messages',
      'ask_human',
      'exec_process',
    ]);
  });

  it('[K-30] activating a Skill changes only that process visible table', async () => {
    const rt = await runtimeAt(':memory:');
    const p1 = await rt.spawn({ image: 'notes-agent:v0', goal: 'one' });
    const p2 = await rt.spawn({ image: 'notes-agent:v0', goal: 'two' });
    await rt.grant(p1.pid, 'skill:test-notes', ['execute']);
    const r = await rt.call(p1.pid, 'activate_skill', { skill_id: 'test-notes' });
    expect(r).toMatchObject({
      ok: true,
      payload: { skill_id: 'test-notes', tool_names: ['note_write', 'note_write_then_fail', 'note_write_then_crash', 'note_count'] },
    });
    expect((await rt.process(p1.pid)).visibleTools).toContain('note_write');
    expect((await rt.process(p2.pid)).visibleTools).not.toContain('note_write');
    const denied = await rt.call(p2.pid, 'note_count', {});
    expect(!denied.ok && denied.error.code).toBe('tool_not_in_process_table');
  });

  it('activate_skill without execute on skill:<id> is refused and grants nothing', async () => {
    const rt = await runtimeAt(':memory:');
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    const r = await rt.call(p.pid, 'activate_skill', { skill_id: 'test-notes' });
    expect(!r.ok && r.error.code).toBe('permission_denied');
    expect((await rt.process(p.pid)).visibleTools).not.toContain('note_write');
    expect(await rt.capabilities(p.pid)).toEqual([]);
  });

  it('[K-29] a stale expected package hash is refused with skill_package_changed and changes nothing', async () => {
    const rt = await runtimeAt(':memory:');
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    await rt.grant(p.pid, 'skill:*', ['execute', 'read']);
    const r = await rt.call(p.pid, 'activate_skill', { skill_id: 'test-notes', expected_package_sha256: '0'.repeat(64) });
    expect(!r.ok && r.error.code).toBe('skill_package_changed');
    expect(Object.keys((await rt.process(p.pid)).loadedSkills)).toEqual(['agent-libos-skill-navigation']);
  });

  it('[K-28] discover_skills returns metadata only, with active flags', async () => {
    const rt = await runtimeAt(':memory:');
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    await rt.grant(p.pid, 'skill:*', ['read']);
    const r = await rt.call(p.pid, 'discover_skills', { text: 'notes' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const payload = r.payload as { skills: Record<string, unknown>[]; next_step: string };
    expect(payload.skills).toHaveLength(1);
    expect(Object.keys(payload.skills[0]!).sort()).toEqual(['active', 'description', 'package_sha256', 'skill_id', 'tools']);
    expect(payload.skills[0]).toMatchObject({ skill_id: 'test-notes', active: false });
    expect(payload.next_step).toBe('activate_skill');
  });

  it('unload_skill removes the tools only it showed and revokes nothing', async () => {
    const rt = await runtimeAt(':memory:');
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    await rt.grant(p.pid, 'skill:test-notes', ['execute']);
    await rt.activateSkill(p.pid, 'test-notes');
    const r = await rt.call(p.pid, 'unload_skill', { skill_id: 'test-notes' });
    expect(r).toMatchObject({
      ok: true,
      payload: { removed_tools: ['note_count', 'note_write', 'note_write_then_crash', 'note_write_then_fail'] },
    });
    expect((await rt.process(p.pid)).visibleTools).toEqual(['activate_skill', 'discover_skills', 'unload_skill']);
    expect((await rt.capabilities(p.pid)).map((c) => c.resource)).toEqual(['skill:test-notes']);
  });

  it('the JSON Schema a model sees is generated from the zod input', async () => {
    const rt = await runtimeAt(':memory:');
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'x' });
    await rt.activateSkill(p.pid, 'test-notes');
    const schemas = await rt.toolSchemas(p.pid);
    const write = schemas.find((s) => s.name === 'note_write')!;
    expect(write.inputSchema).toMatchObject({
      type: 'object',
      properties: { key: { type: 'string', minLength: 1, maxLength: 40 }, text: { type: 'string', maxLength: 200 } },
      required: ['key', 'text'],
    });
    const discover = schemas.find((s) => s.name === 'discover_skills')!;
    expect(discover.inputSchema).toMatchObject({ properties: { limit: { type: 'integer', minimum: 1, maximum: 50, default: 10 } } });
  });
});

describe('runtime: store', () => {
  it('[K-48] reopen keeps processes and audit', async () => {
    const path = tempDb();
    const rt = await runtimeAt(path);
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'persist me' });
    await rt.activateSkill(p.pid, 'test-notes');
    await rt.grant(p.pid, 'note:*', ['write']);
    await rt.call(p.pid, 'note_write', { key: 'k', text: 'v' });
    const auditBefore = await rt.audit();
    await rt.close();
    const again = await runtimeAt(path);
    const q = await again.process(p.pid);
    expect(q).toMatchObject({ pid: p.pid, goal: 'persist me', status: 'runnable' });
    expect(q.visibleTools).toContain('note_write');
    expect(await again.audit()).toEqual(auditBefore);
    expect((await again.capabilities(p.pid)).map((c) => c.resource)).toEqual(['note:*']);
  });

  it('[K-47] a second writable open fails with store_locked naming the file; after close it opens', async () => {
    const path = tempDb();
    const first = await runtimeAt(path);
    const err = await openRuntime({ path, plugins: [notesPluginWithImage()] }).catch((e) => e);
    expect(err).toMatchObject({ code: 'store_locked' });
    expect(err.message).toContain(path);
    await first.close();
    const second = await runtimeAt(path);
    expect(await second.processes()).toEqual([]);
  });

  it('[K-50] a store with another schema version is refused', async () => {
    const path = tempDb();
    await (await runtimeAt(path)).close();
    const raw = new Database(path);
    raw.prepare("update libos_meta set value = '999' where key = 'schema_version'").run();
    raw.close();
    await expect(openRuntime({ path, plugins: [notesPluginWithImage()] })).rejects.toMatchObject({ code: 'schema_version_mismatch' });
  });

  it('a closed runtime refuses calls with store_closed', async () => {
    const rt = await openRuntime({ path: ':memory:' });
    await rt.close();
    await expect(rt.processes()).rejects.toMatchObject({ code: 'store_closed' });
  });
});
