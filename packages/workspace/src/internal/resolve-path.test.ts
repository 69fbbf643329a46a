import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isGitMetadata, isInside, resolvePath } from './resolve-path.js';

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'libos-resolve-')));
  mkdirSync(join(root, 'a'));
  mkdirSync(join(root, 'b'));
  writeFileSync(join(root, 'b', 'x'), 'secret');
  writeFileSync(join(root, 'a', 'f.txt'), 'hello');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const r = (input: string, followFinal = true) => resolvePath(join(root, 'a'), input, { followFinal, field: 'path' });

describe('resolvePath', () => {
  it('applies .. to the text: a/../b/x is b/x, outside a', () => {
    const p = resolvePath(root, 'a/../b/x', { followFinal: true, field: 'path' });
    expect(p.real).toBe(join(root, 'b', 'x'));
    expect(p.kind).toBe('file');
  });

  it('follows a symlink inside a to where it points (b), also through a directory link', () => {
    symlinkSync(join(root, 'b', 'x'), join(root, 'a', 'link'));
    symlinkSync(join(root, 'b'), join(root, 'a', 'dir'));
    expect(r('link').real).toBe(join(root, 'b', 'x'));
    expect(r('dir/x').real).toBe(join(root, 'b', 'x'));
    expect(r('dir/new/file.txt').real).toBe(join(root, 'b', 'new', 'file.txt'));
  });

  it('keeps the last link itself when followFinal is false (delete, list the link)', () => {
    symlinkSync(join(root, 'b', 'x'), join(root, 'a', 'link'));
    const p = r('link', false);
    expect(p.real).toBe(join(root, 'a', 'link'));
    expect(p.kind).toBe('symlink');
  });

  it('resolves a dangling link to its target, so a write through it lands where the grant is checked', () => {
    symlinkSync('../b/missing.txt', join(root, 'a', 'dangling'));
    const p = r('dangling');
    expect(p.real).toBe(join(root, 'b', 'missing.txt'));
    expect(p.kind).toBeNull();
  });

  it('reads a relative link target from the real directory of the link, with .. climbing from there', () => {
    mkdirSync(join(root, 'a', 'deep'));
    symlinkSync('../../b', join(root, 'a', 'deep', 'up'));
    expect(r('deep/up/x').real).toBe(join(root, 'b', 'x'));
  });

  it('refuses a link loop with a clear reason', () => {
    symlinkSync(join(root, 'a', 'l2'), join(root, 'a', 'l1'));
    symlinkSync(join(root, 'a', 'l1'), join(root, 'a', 'l2'));
    expect(() => r('l1')).toThrow(
      expect.objectContaining({ code: 'invalid_arguments', details: expect.objectContaining({ reason: 'symlink_loop' }) }),
    );
  });

  it('keeps missing components and components under a file as written', () => {
    expect(r('new/dir/file').real).toBe(join(root, 'a', 'new', 'dir', 'file'));
    expect(r('f.txt/below').real).toBe(join(root, 'a', 'f.txt', 'below'));
    expect(r('f.txt/below').kind).toBeNull();
  });

  it('checks the text first (NUL is invalid_arguments before any filesystem call)', () => {
    expect(() => r('a\u0000b')).toThrow(
      expect.objectContaining({ code: 'invalid_arguments', details: expect.objectContaining({ reason: 'nul_byte' }) }),
    );
  });
});

it('isInside and isGitMetadata compare components, not prefixes', () => {
  expect(isInside('/srv/app', '/srv/app')).toBe(true);
  expect(isInside('/srv/app', '/srv/app/x')).toBe(true);
  expect(isInside('/srv/app', '/srv/app2/x')).toBe(false);
  expect(isGitMetadata('/srv/app/.git/config')).toBe(true);
  expect(isGitMetadata('/srv/app/.gitignore')).toBe(false);
});
