import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointAgent, openCheckpointHarness, type CheckpointHarness } from './support/checkpoints-harness.js';
import { fails, ok, type Json } from './support/kernel-harness.js';

// Object files (docs/behaviour/checkpoints.md CP-18..CP-20): an Object's text to a file and back, through the workspace
// file provider, under fs: grants on real paths.

let h: CheckpointHarness | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.rt.close();
  h = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A real temp directory (symlinks resolved, as the grants name real paths) with `work/` and `outside/`. */
function sandbox(): { root: string; work: string; outside: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'libos-files-')));
  dirs.push(root);
  mkdirSync(join(root, 'work'));
  mkdirSync(join(root, 'outside'));
  return { root, work: join(root, 'work'), outside: join(root, 'outside') };
}

async function setup() {
  const box = sandbox();
  h = await openCheckpointHarness({ baseDirectory: box.work });
  const pid = await checkpointAgent(h.rt);
  await h.rt.grant(pid, `fs:${box.work}/*`, ['read', 'write']);
  return { rt: h.rt, pid, ...box };
}

describe('write_object_to_file', () => {
  it('[CP-18] writes a string payload, or the content of {content}, to a file under a write grant; the file keeps the labels', async () => {
    const { rt, pid, work } = await setup();
    await ok(rt, pid, 'create_memory_object', {
      type: 'artifact',
      name: 'report',
      payload: '# Report\nall good\n',
      metadata: { sensitivity: 'confidential' },
    });
    const w = await ok(rt, pid, 'write_object_to_file', { name: 'report', path: 'report.md' });
    expect(w).toMatchObject({ path: join(work, 'report.md'), bytes: 18, created: true });
    expect(readFileSync(join(work, 'report.md'), 'utf8')).toBe('# Report\nall good\n');
    await ok(rt, pid, 'create_memory_object', {
      type: 'artifact',
      name: 'wrapped',
      payload: { content: 'inner text', mime: 'text/plain' },
    });
    await ok(rt, pid, 'write_object_to_file', { name: 'wrapped', path: join(work, 'inner.txt') });
    expect(readFileSync(join(work, 'inner.txt'), 'utf8')).toBe('inner text');
    const audit = await rt.audit({ action: 'object.write_to_file' });
    expect(audit.at(-1)).toMatchObject({ decision: 'ok', details: { path: join(work, 'inner.txt'), bytes: 10 } });
    expect((await rt.audit({ action: 'workspace.file.write' })).length).toBe(2);
    const binding = await rt.transaction(async (scope) =>
      (scope.store as Json).selectFrom('file_label_bindings').selectAll().where('path', '=', join(work, 'report.md')).executeTakeFirst(),
    );
    expect(JSON.parse(binding.labels)).toMatchObject({ sensitivity: 'confidential' });
  });

  it('[CP-20] outside the grant, via an outward symlink, non-text payload or an unreadable Object: refused, nothing written', async () => {
    const { rt, pid, work, outside } = await setup();
    await ok(rt, pid, 'create_memory_object', { type: 'artifact', name: 'text', payload: 'secret' });
    await ok(rt, pid, 'create_memory_object', { type: 'plan', name: 'structured', payload: { entries: [1] } });
    symlinkSync(join(outside, 'target.txt'), join(work, 'escape.txt'));
    expect((await fails(rt, pid, 'write_object_to_file', { name: 'text', path: join(outside, 'x.txt') })).code).toBe('permission_denied');
    const viaLink = await fails(rt, pid, 'write_object_to_file', { name: 'text', path: 'escape.txt' });
    expect(viaLink.code).toBe('permission_denied');
    expect(viaLink.message).toContain(join(outside, 'target.txt'));
    expect((await fails(rt, pid, 'write_object_to_file', { name: 'text', path: '../outside/y.txt' })).code).toBe('permission_denied');
    expect((await fails(rt, pid, 'write_object_to_file', { name: 'structured', path: 'plan.json' })).code).toBe('invalid_arguments');
    expect((await fails(rt, pid, 'write_object_to_file', { name: 'missing', path: 'm.txt' })).code).toBe('object_not_found');
    const stranger = await checkpointAgent(rt, 'stranger');
    await rt.grant(stranger, `fs:${work}/*`, ['write']);
    await rt.grant(stranger, `object_namespace:process:${pid}`, ['read']);
    expect(
      (await fails(rt, stranger, 'write_object_to_file', { name: 'text', namespace: `process:${pid}`, path: 'stolen.txt' })).code,
    ).toBe('object_not_found');
    for (const f of ['x.txt', 'y.txt', 'target.txt']) expect(existsSync(join(outside, f))).toBe(false);
    for (const f of ['plan.json', 'm.txt', 'stolen.txt']) expect(existsSync(join(work, f))).toBe(false);
    expect(await rt.audit({ action: 'object.write_to_file' })).toEqual([]);
    expect(await rt.transaction(async (scope) => (scope.store as Json).selectFrom('file_label_bindings').selectAll().execute())).toEqual(
      [],
    );
  });
});

describe('read_file_to_object', () => {
  it('[CP-19] reads a text file into a new Object with the labels it was written with, never trusted', async () => {
    const { rt, pid, work } = await setup();
    await ok(rt, pid, 'create_memory_object', {
      type: 'artifact',
      name: 'secret',
      payload: 'the vault code',
      metadata: { sensitivity: 'secret' },
    });
    await ok(rt, pid, 'write_object_to_file', { name: 'secret', path: 'vault.txt' });
    const reader = await checkpointAgent(rt, 'reader');
    await rt.grant(reader, `fs:${work}/*`, ['read']);
    const r = await ok(rt, reader, 'read_file_to_object', { path: join(work, 'vault.txt'), name: 'from-file' });
    expect(r).toMatchObject({
      namespace: `process:${reader}`,
      name: 'from-file',
      type: 'artifact',
      path: join(work, 'vault.txt'),
      bytes: 14,
    });
    const read = await ok(rt, reader, 'read_memory_object', { name: 'from-file' });
    expect(read.payload).toBe('the vault code');
    const labels = (await rt.transaction(async (scope) => (scope.service('objects') as Json).describe(r.oid))).labels;
    expect(labels).toMatchObject({ sensitivity: 'secret', trust_level: 'untrusted' });
    writeFileSync(join(work, 'plain.txt'), 'hello');
    const wrapped = await ok(rt, reader, 'read_file_to_object', { path: 'plain.txt', name: 'wrapped', wrap_content: true });
    expect((await ok(rt, reader, 'read_memory_object', { name: 'wrapped' })).payload).toEqual({ content: 'hello' });
    expect((await rt.transaction(async (scope) => (scope.service('objects') as Json).describe(wrapped.oid))).labels.trust_level).toBe(
      'untrusted',
    );
  });

  it('[CP-20] a path outside the grant, a symlink pointing out, an oversized file or no namespace write: refused, no Object', async () => {
    const { rt, pid, work, outside } = await setup();
    writeFileSync(join(outside, 'secret.txt'), 'outside');
    symlinkSync(join(outside, 'secret.txt'), join(work, 'link.txt'));
    writeFileSync(join(work, 'big.txt'), 'b'.repeat(200_000));
    const before = (await rt.transaction(async (scope) => (scope.service('objects') as Json).listObjects({ namespace: `process:${pid}` })))
      .length;
    expect((await fails(rt, pid, 'read_file_to_object', { path: join(outside, 'secret.txt'), name: 'a' })).code).toBe('permission_denied');
    expect((await fails(rt, pid, 'read_file_to_object', { path: 'link.txt', name: 'b' })).code).toBe('permission_denied');
    expect((await fails(rt, pid, 'read_file_to_object', { path: 'big.txt', name: 'c' })).code).toBe('payload_too_large');
    expect((await fails(rt, pid, 'read_file_to_object', { path: 'big.txt', name: 'd', namespace: 'elsewhere' })).code).toBe(
      'namespace_denied',
    );
    expect(
      (await rt.transaction(async (scope) => (scope.service('objects') as Json).listObjects({ namespace: `process:${pid}` }))).length,
    ).toBe(before);
  });
});
