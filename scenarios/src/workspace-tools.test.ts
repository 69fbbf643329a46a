// Long file: one scenario's stories over one shared harness; split, each file would repeat the setup.
// The workspace tools against the real kernel, capability engine and filesystem (issue 13 acceptance): every tool
// refuses without its grant and works with it; a grant on <tmp>/a/* reaches nothing in b, neither through ".." nor
// through a symlink; commands are killed with their children on timeout; bad input is a clear code, nothing written.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WORKSPACE_TOOLS } from '@libos/workspace';
import { fails, git, isAlive, ok, openWorkspaceHarness, WORKSPACE_IMAGE } from './support/workspace-harness.js';
import type { Json, WorkspaceHarness } from './support/workspace-harness.js';

let h: WorkspaceHarness;
let pid: string;
let a: string;
let b: string;
beforeEach(async () => {
  h = await openWorkspaceHarness();
  a = join(h.dir, 'a');
  b = join(h.dir, 'b');
  mkdirSync(a);
  mkdirSync(b);
  writeFileSync(join(a, 'f.txt'), 'one\ntwo\nthree\n');
  writeFileSync(join(b, 'x'), 'secret in b\n');
  pid = (await h.rt.spawn({ image: WORKSPACE_IMAGE, goal: 'work in a', workingDirectory: a })).pid;
});
afterEach(async () => h.close());

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
/** Every file under `dir` (names as hex bytes, so names that are not UTF-8 count too) with its sha256. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (d: Buffer) => {
    for (const e of readdirSync(d, { withFileTypes: true, encoding: 'buffer' })) {
      const p = Buffer.concat([d, Buffer.from('/'), e.name]);
      if (e.isDirectory()) visit(p);
      else
        out[p.toString('hex')] = e.isFile()
          ? createHash('sha256').update(readFileSync(p)).digest('hex')
          : e.isSymbolicLink()
            ? 'link'
            : 'other';
    }
  };
  visit(Buffer.from(dir));
  return out;
}
const grantA = (rights: ('read' | 'write' | 'delete')[]) => h.rt.grant(pid, `fs:${a}/*`, rights);

describe('[WS-1] every tool refuses without its grant (nothing written, nothing run) and works with it', () => {
  it('file tools: fs:<path> read / write / delete', async () => {
    const before = snapshot(h.dir);
    const denied: [string, Json][] = [
      ['read_file', { path: 'f.txt' }],
      ['list_files', {}],
      ['search_files', { pattern: 'two' }],
      ['set_working_directory', { path: '.' }],
      ['write_file', { path: 'new.txt', content: 'x' }],
      ['edit_file', { path: 'f.txt', old_text: 'two', new_text: '2' }],
      ['make_directory', { path: 'sub' }],
      ['delete_path', { path: 'f.txt' }],
      ['parse_test_log', { path: 'f.txt' }],
    ];
    for (const [tool, args] of denied) expect(await fails(h.rt, pid, tool, args), tool).toMatchObject({ code: 'permission_denied' });
    expect(snapshot(h.dir)).toEqual(before);

    await grantA(['read']);
    expect(await ok(h.rt, pid, 'read_file', { path: 'f.txt' })).toMatchObject({ content: 'one\ntwo\nthree\n', total_lines: 3 });
    expect((await ok(h.rt, pid, 'list_files', {})).entries).toEqual([{ path: 'f.txt', type: 'file', size: 14 }]);
    expect((await ok(h.rt, pid, 'search_files', { pattern: 't(wo|hree)' })).matches).toEqual([
      { path: 'f.txt', line: 2, text: 'two' },
      { path: 'f.txt', line: 3, text: 'three' },
    ]);
    // read alone still cannot write
    expect(await fails(h.rt, pid, 'write_file', { path: 'new.txt', content: 'x' })).toMatchObject({ code: 'permission_denied' });
    expect(snapshot(h.dir)).toEqual(before);

    await grantA(['write', 'delete']);
    expect(await ok(h.rt, pid, 'write_file', { path: 'new.txt', content: 'fresh\n' })).toMatchObject({
      path: join(a, 'new.txt'),
      bytes: 6,
      created: true,
    });
    expect(await ok(h.rt, pid, 'edit_file', { path: 'f.txt', old_text: 'two', new_text: '2' })).toMatchObject({
      replacements: 1,
      first_changed_line: 2,
    });
    expect(readFileSync(join(a, 'f.txt'), 'utf8')).toBe('one\n2\nthree\n');
    expect(await ok(h.rt, pid, 'make_directory', { path: 'sub/deeper' })).toEqual({ path: join(a, 'sub', 'deeper'), created: true });
    expect(await ok(h.rt, pid, 'delete_path', { path: 'new.txt' })).toMatchObject({ deleted: true, type: 'file' });
    expect(existsSync(join(a, 'new.txt'))).toBe(false);
    expect(await ok(h.rt, pid, 'set_working_directory', { path: 'sub' })).toEqual({ path: join(a, 'sub'), previous: a });
    expect(await ok(h.rt, pid, 'get_working_directory', {})).toEqual({ path: join(a, 'sub') });
  });

  it('run_shell_command: shell:<program> execute and fs:<cwd> write; nothing runs without both', async () => {
    const marker = join(a, 'ran.txt');
    const args = { argv: ['touch', 'ran.txt'] };
    expect(await fails(h.rt, pid, 'run_shell_command', args)).toMatchObject({ code: 'permission_denied' });
    await h.rt.grant(pid, 'shell:touch', ['execute']);
    expect(await fails(h.rt, pid, 'run_shell_command', args)).toMatchObject({
      code: 'permission_denied',
      message: expect.stringContaining(`fs:${a}`),
    });
    await grantA(['write']);
    expect(await fails(h.rt, pid, 'run_shell_command', { command: 'touch ran.txt' })).toMatchObject({
      code: 'permission_denied',
      message: expect.stringContaining('shell:sh'),
    });
    expect(existsSync(marker)).toBe(false);
    expect(await ok(h.rt, pid, 'run_shell_command', args)).toMatchObject({ status: 'exited', exit_code: 0, program: 'touch', cwd: a });
    expect(existsSync(marker)).toBe(true);
    await h.rt.grant(pid, 'shell:*', ['execute']);
    expect(await ok(h.rt, pid, 'run_shell_command', { command: 'echo "$0 in $PWD"; exit 4' })).toMatchObject({
      status: 'exited',
      exit_code: 4,
      stdout: { text: `sh in ${a}\n` },
    });
    const audits = await h.rt.audit({ pid, action: 'workspace.shell.run' });
    expect(audits.map((r) => [r.target, r.decision])).toEqual([
      ['shell:touch', 'exited'],
      ['shell:sh', 'exited'],
    ]);
  });

  it('git tools: git:<repo> read for status/diff/log/show/branch list, write for add/commit/branch/checkout', async () => {
    git(a, 'init', '-q', '-b', 'main');
    git(a, 'add', '-A');
    git(a, 'commit', '-q', '-m', 'fixture');
    writeFileSync(join(a, 'f.txt'), 'changed\n');
    const head = git(a, 'rev-parse', 'HEAD').trim();
    const reads: [string, Json][] = [
      ['git_status', {}],
      ['git_diff', {}],
      ['git_log', {}],
      ['git_show', {}],
      ['git_branch', {}],
    ];
    const writes: [string, Json][] = [
      ['git_add', { paths: ['f.txt'] }],
      ['git_commit', { message: 'agent change', allow_empty: true }],
      ['git_branch', { create: 'feature' }],
      ['git_checkout', { ref: 'feature', create_branch: true }],
    ];
    for (const [tool, args] of [...reads, ...writes])
      expect(await fails(h.rt, pid, tool, args), tool).toMatchObject({ code: 'permission_denied' });
    await h.rt.grant(pid, `git:${a}`, ['read']);
    expect(await ok(h.rt, pid, 'git_status', {})).toMatchObject({
      repo: a,
      branch: 'main',
      clean: false,
      entries: [{ path: 'f.txt', index: ' ', worktree: 'M' }],
    });
    expect((await ok(h.rt, pid, 'git_diff', {})).diff).toContain('+changed');
    expect((await ok(h.rt, pid, 'git_log', {})).commits).toMatchObject([{ commit: head, subject: 'fixture' }]);
    expect((await ok(h.rt, pid, 'git_show', { file: 'f.txt' })).text).toBe('one\ntwo\nthree\n');
    expect((await ok(h.rt, pid, 'git_branch', {})).branches).toEqual([{ name: 'main', current: true, commit: head }]);
    for (const [tool, args] of writes) expect(await fails(h.rt, pid, tool, args), tool).toMatchObject({ code: 'permission_denied' });
    expect(git(a, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(git(a, 'diff', '--cached', '--name-only')).toBe('');

    await h.rt.grant(pid, `git:${a}`, ['write']);
    expect(await ok(h.rt, pid, 'git_add', { paths: ['f.txt'] })).toMatchObject({ staged: ['f.txt'] });
    const commit = await ok(h.rt, pid, 'git_commit', { message: 'agent change\n\nwith a body' });
    expect(commit).toMatchObject({ repo: a, branch: 'main', subject: 'agent change' });
    expect(git(a, 'rev-parse', 'HEAD').trim()).toBe(commit.commit);
    expect(git(a, 'log', '-1', '--format=%B').trim()).toBe('agent change\n\nwith a body');
    expect((await ok(h.rt, pid, 'git_branch', { create: 'feature' })).branches.map((x: Json) => x.name)).toEqual(['feature', 'main']);
    expect(await ok(h.rt, pid, 'git_checkout', { ref: 'feature' })).toMatchObject({ branch: 'feature', head: commit.commit });
    expect(await ok(h.rt, pid, 'git_checkout', { ref: 'HEAD~1', paths: ['f.txt'] })).toMatchObject({ restored_paths: 1 });
    expect(readFileSync(join(a, 'f.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect((await h.rt.audit({ pid, action: 'workspace.git.commit' }))[0]).toMatchObject({
      target: `git:${a}`,
      details: { commit: commit.commit },
    });
  });
});

describe('[WS-2] a grant on <tmp>/a/* reaches nothing in b', () => {
  beforeEach(async () => {
    symlinkSync(join(b, 'x'), join(a, 'link-to-x'));
    symlinkSync(b, join(a, 'link-to-b'));
    await grantA(['read', 'write', 'delete']);
  });

  it('cannot read <tmp>/a/../b/x, nor b through a symlink inside a (file or directory link)', async () => {
    for (const path of [join(a, '..', 'b', 'x'), '../b/x', 'link-to-x', 'link-to-b/x', join(a, 'link-to-b', 'x')]) {
      const e = await fails(h.rt, pid, 'read_file', { path });
      expect(e, path).toMatchObject({ code: 'permission_denied', message: expect.stringContaining(`fs:${join(b, 'x')}`) });
    }
    expect(await fails(h.rt, pid, 'list_files', { path: 'link-to-b' })).toMatchObject({ code: 'permission_denied' });
    expect(await fails(h.rt, pid, 'search_files', { pattern: 'secret', path: 'link-to-b' })).toMatchObject({ code: 'permission_denied' });
    expect(await fails(h.rt, pid, 'set_working_directory', { path: 'link-to-b' })).toMatchObject({ code: 'permission_denied' });
  });

  it('cannot write into b through a link (nor create a file through a dangling one); the link is listed, not followed', async () => {
    symlinkSync(join(b, 'created-through-link'), join(a, 'dangling'));
    const before = snapshot(b);
    expect(await fails(h.rt, pid, 'write_file', { path: 'link-to-x', content: 'pwned' })).toMatchObject({ code: 'permission_denied' });
    expect(await fails(h.rt, pid, 'write_file', { path: 'link-to-b/new.txt', content: 'pwned' })).toMatchObject({
      code: 'permission_denied',
    });
    expect(await fails(h.rt, pid, 'write_file', { path: 'dangling', content: 'pwned' })).toMatchObject({ code: 'permission_denied' });
    expect(await fails(h.rt, pid, 'edit_file', { path: 'link-to-x', old_text: 'secret', new_text: 'x' })).toMatchObject({
      code: 'permission_denied',
    });
    expect(snapshot(b)).toEqual(before);
    const listing = await ok(h.rt, pid, 'list_files', { recursive: true });
    expect(listing.entries.map((e: Json) => [e.path, e.type])).toEqual([
      ['dangling', 'symlink'],
      ['f.txt', 'file'],
      ['link-to-b', 'symlink'],
      ['link-to-x', 'symlink'],
    ]);
    expect((await ok(h.rt, pid, 'search_files', { pattern: 'secret' })).matches).toEqual([]);
    // Deleting the link removes the link, never its target.
    expect(await ok(h.rt, pid, 'delete_path', { path: 'link-to-x' })).toMatchObject({ type: 'symlink' });
    expect(readFileSync(join(b, 'x'), 'utf8')).toBe('secret in b\n');
  });

  it('a command cannot run in b (cwd resolved like any path)', async () => {
    await h.rt.grant(pid, 'shell:touch', ['execute']);
    expect(await fails(h.rt, pid, 'run_shell_command', { argv: ['touch', 'y'], cwd: 'link-to-b' })).toMatchObject({
      code: 'permission_denied',
    });
    expect(existsSync(join(b, 'y'))).toBe(false);
  });
});

describe('[WS-3] commands: timeout kills the process group; output is capped', () => {
  beforeEach(async () => {
    await grantA(['read', 'write']);
    await h.rt.grant(pid, 'shell:sh', ['execute']);
  });

  it('a command sleeping past its timeout returns timed_out and leaves no process (checked by pid)', async () => {
    const r = await ok(h.rt, pid, 'run_shell_command', {
      command: 'sleep 30 & echo $!; (sleep 30; touch late.txt) & echo $!; echo $$; wait',
      timeout_seconds: 1,
    });
    expect(r).toMatchObject({ status: 'timed_out', timed_out: true, exit_code: null });
    const pids = (r.stdout.text as string).trim().split('\n').map(Number);
    expect(pids).toHaveLength(3);
    for (const p of pids) expect(isAlive(p), `pid ${p}`).toBe(false);
    expect(existsSync(join(a, 'late.txt'))).toBe(false);
  });

  it('10 MB of output is capped to the bound with head and tail', async () => {
    const r = await ok(h.rt, pid, 'run_shell_command', {
      command: "printf HEAD; head -c 10485760 /dev/zero | tr '\\0' y; printf TAIL",
      max_output_bytes: 4_096,
    });
    expect(r.stdout).toMatchObject({ total_bytes: 10_485_768, truncated: true, omitted_bytes: 10_485_768 - 4_096 });
    expect(r.stdout.text.startsWith('HEADyyy')).toBe(true);
    expect(r.stdout.text.endsWith('yyyTAIL')).toBe(true);
  });

  it('a cancel after the start is a cancelled error saying it started; the group is killed', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 500);
    const e = await fails(h.rt, pid, 'run_shell_command', { command: 'sleep 30 & echo $!; wait' }, ac.signal);
    expect(e).toMatchObject({ code: 'cancelled', details: { started: true } });
    for (const p of String(e.details.stdout_tail).trim().split('\n').filter(Boolean).map(Number)) expect(isAlive(p)).toBe(false);
  });

  it('a program that is not installed provably did not start; the host environment is scrubbed', async () => {
    await h.rt.grant(pid, 'shell:no-such-program-xyz', ['execute']);
    expect(await fails(h.rt, pid, 'run_shell_command', { argv: ['no-such-program-xyz'] })).toMatchObject({
      code: 'not_found',
      details: { started: false },
    });
    process.env.LIBOS_TEST_SECRET = 'leak';
    try {
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, for the shell to expand.
      const r = await ok(h.rt, pid, 'run_shell_command', { command: 'echo "${LIBOS_TEST_SECRET:-scrubbed} $MINE"', env: { MINE: 'mine' } });
      expect(r.stdout.text).toBe('scrubbed mine\n');
    } finally {
      delete process.env.LIBOS_TEST_SECRET;
    }
    expect(await fails(h.rt, pid, 'run_shell_command', { command: 'true', env: { LD_PRELOAD: '/x.so' } })).toMatchObject({
      code: 'invalid_arguments',
    });
  });
});

describe('[WS-4] bad input: a clear code, nothing written', () => {
  beforeEach(async () => grantA(['read', 'write', 'delete']));

  it('missing file, directory for a file, binary file, NUL, non-UTF-8 name, ambiguous edit', async () => {
    mkdirSync(join(a, 'dir'));
    writeFileSync(join(a, 'bin.dat'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff]));
    writeFileSync(join(a, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    writeFileSync(join(a, 'twice.txt'), 'x = 1\nx = 1\n');
    writeFileSync(Buffer.concat([Buffer.from(`${a}/`), Buffer.from([0x6e, 0xff, 0x6d])]), 'named in latin-1');
    const before = snapshot(a);
    const cases: [string, string, Json, string, string][] = [
      ['missing file', 'read_file', { path: 'nope.txt' }, 'not_found', 'not_found'],
      ['missing file', 'edit_file', { path: 'nope.txt', old_text: 'a', new_text: 'b' }, 'not_found', 'not_found'],
      ['missing file', 'write_file', { path: 'nope.txt', content: 'x', mode: 'overwrite' }, 'not_found', 'not_found'],
      ['a directory where a file is expected', 'read_file', { path: 'dir' }, 'invalid_arguments', 'is_directory'],
      ['a directory where a file is expected', 'write_file', { path: 'dir', content: 'x' }, 'invalid_arguments', 'is_directory'],
      [
        'a directory where a file is expected',
        'edit_file',
        { path: 'dir', old_text: 'a', new_text: 'b' },
        'invalid_arguments',
        'is_directory',
      ],
      ['a binary file', 'read_file', { path: 'bin.dat' }, 'invalid_arguments', 'binary_file'],
      ['a file that is not UTF-8', 'read_file', { path: 'latin1.txt' }, 'invalid_arguments', 'binary_file'],
      ['a binary file', 'edit_file', { path: 'bin.dat', old_text: 'P', new_text: 'Q' }, 'invalid_arguments', 'binary_file'],
      ['a path with NUL', 'read_file', { path: 'f.txt\u0000.png' }, 'invalid_arguments', 'nul_byte'],
      ['a path with NUL', 'write_file', { path: 'evil\u0000.txt', content: 'x' }, 'invalid_arguments', 'nul_byte'],
      ['a non-UTF-8 name', 'write_file', { path: 'n\ud800m', content: 'x' }, 'invalid_arguments', 'not_utf8'],
      ['a non-UTF-8 name', 'read_file', { path: 'n\udfffm' }, 'invalid_arguments', 'not_utf8'],
      [
        'an edit whose old text occurs twice',
        'edit_file',
        { path: 'twice.txt', old_text: 'x = 1', new_text: 'x = 2' },
        'invalid_arguments',
        'old_text_ambiguous',
      ],
      [
        'an edit whose old text is absent',
        'edit_file',
        { path: 'f.txt', old_text: 'four', new_text: '4' },
        'invalid_arguments',
        'old_text_not_found',
      ],
      ['create over an existing file', 'write_file', { path: 'f.txt', content: 'x', mode: 'create' }, 'conflict', 'already_exists'],
      [
        'a write into .git',
        'write_file',
        { path: '.git/config', content: '[core]', create_parents: true },
        'permission_denied',
        'git_metadata',
      ],
    ];
    for (const [what, tool, args, code, reason] of cases) {
      expect(await fails(h.rt, pid, tool, args), `${what} (${tool})`).toMatchObject({ code, details: { reason } });
    }
    expect((await fails(h.rt, pid, 'edit_file', { path: 'twice.txt', old_text: 'x = 1', new_text: 'x = 2' })).details).toMatchObject({
      occurrences: 2,
      lines: [1, 2],
    });
    expect(snapshot(a)).toEqual(before);
    // The non-UTF-8 name is reported in hex, never returned as mangled text.
    const listing = await ok(h.rt, pid, 'list_files', {});
    expect(listing.entries.map((e: Json) => e.path)).toEqual(['bin.dat', 'dir', 'f.txt', 'latin1.txt', 'twice.txt']);
    expect(listing).toMatchObject({ non_utf8_count: 1, non_utf8_names: [{ parent: a, name_hex: '6eff6d' }] });
    // replace_all resolves the ambiguity on purpose.
    expect(await ok(h.rt, pid, 'edit_file', { path: 'twice.txt', old_text: 'x = 1', new_text: 'x = 2', replace_all: true })).toMatchObject({
      replacements: 2,
    });
  });

  it('every write is audited with path, bytes and sha256 before and after (never the content)', async () => {
    const oldSha = sha(join(a, 'f.txt'));
    const w = await ok(h.rt, pid, 'write_file', { path: 'f.txt', content: 'replaced\n' });
    const e = await ok(h.rt, pid, 'edit_file', { path: 'f.txt', old_text: 'replaced', new_text: 'edited' });
    const audits = await h.rt.audit({ pid });
    const writes = audits.filter((r) => r.action === 'workspace.file.write' || r.action === 'workspace.file.edit');
    expect(writes.map((r) => [r.action, r.target, r.details])).toEqual([
      [
        'workspace.file.write',
        `fs:${join(a, 'f.txt')}`,
        expect.objectContaining({
          path: join(a, 'f.txt'),
          bytes_before: 14,
          sha256_before: oldSha,
          bytes_after: 9,
          sha256_after: w.sha256,
          created: false,
        }),
      ],
      [
        'workspace.file.edit',
        `fs:${join(a, 'f.txt')}`,
        expect.objectContaining({ bytes_before: 9, sha256_before: w.sha256, bytes_after: 7, sha256_after: e.sha256, replacements: 1 }),
      ],
    ]);
    expect(JSON.stringify(writes)).not.toContain('replaced');
    expect(e.sha256).toBe(sha(join(a, 'f.txt')));
  });

  it('read_file pages by lines and by byte offset', async () => {
    writeFileSync(join(a, 'long.txt'), Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n'));
    const first = await ok(h.rt, pid, 'read_file', { path: 'long.txt', start_line: 10, end_line: 12 });
    expect(first).toMatchObject({
      content: 'line 10\nline 11\nline 12\n',
      start_line: 10,
      end_line: 12,
      total_lines: 100,
      next_start_line: 13,
    });
    const capped = await ok(h.rt, pid, 'read_file', { path: 'long.txt', max_bytes: 21 });
    expect(capped).toMatchObject({ content: 'line 1\nline 2\nline 3\n', truncated: true, next_start_line: 4 });
    const bytes = await ok(h.rt, pid, 'read_file', { path: 'long.txt', offset: 7, max_bytes: 7 });
    expect(bytes).toMatchObject({ content: 'line 2\n', next_offset: 14 });
    expect(await fails(h.rt, pid, 'read_file', { path: 'long.txt', start_line: 101 })).toMatchObject({
      code: 'invalid_arguments',
      details: { reason: 'line_out_of_range' },
    });
  });
});

describe('[WS-5] the working directory', () => {
  it('a child spawned after set_working_directory starts there; relative paths start from it', async () => {
    await grantA(['read']);
    mkdirSync(join(a, 'inner'));
    writeFileSync(join(a, 'inner', 'g.txt'), 'inner file');
    await ok(h.rt, pid, 'set_working_directory', { path: 'inner' });
    const child = await h.rt.spawn({ image: WORKSPACE_IMAGE, goal: 'child', parentPid: pid });
    expect(await ok(h.rt, child.pid, 'get_working_directory', {})).toEqual({ path: join(a, 'inner') });
    expect((await h.rt.process(child.pid)).workingDirectory).toBe(join(a, 'inner'));
    // The child holds no grant of its own: visibility is never authority.
    expect(await fails(h.rt, child.pid, 'read_file', { path: 'g.txt' })).toMatchObject({ code: 'permission_denied' });
    expect(await ok(h.rt, pid, 'read_file', { path: 'g.txt' })).toMatchObject({ content: 'inner file' });
    expect(await fails(h.rt, pid, 'set_working_directory', { path: 'g.txt' })).toMatchObject({
      code: 'invalid_arguments',
      details: { reason: 'not_a_directory' },
    });
  });

  it('a process spawned without one works from the plugin base directory', async () => {
    const root = (await h.rt.spawn({ image: WORKSPACE_IMAGE, goal: 'root' })).pid;
    expect(await ok(h.rt, root, 'get_working_directory', {})).toEqual({ path: h.dir });
  });
});

describe('[WS-6] parse_test_log stores a test_result Object', () => {
  it('from a file it may read; the Object holds counts and failing names', async () => {
    await grantA(['read']);
    writeFileSync(join(a, 'run.tap'), 'TAP version 13\nok 1 - adds\nnot ok 2 - subtracts\n1..2\n');
    const r = await ok(h.rt, pid, 'parse_test_log', { path: 'run.tap' });
    expect(r).toMatchObject({
      format: 'tap',
      passed: 1,
      failed: 1,
      total: 2,
      failing: ['subtracts'],
      ok: false,
      namespace: `process:${pid}/test_results`,
    });
    const read = await ok(h.rt, pid, 'read_memory_object', { namespace: r.namespace, name: r.name });
    expect(read).toMatchObject({
      oid: r.oid,
      type: 'test_result',
      payload: { passed: 1, failed: 1, failing: ['subtracts'], ok: false, source: { path: join(a, 'run.tap') } },
    });
  });
});

describe('[WS-8] coding-agent:v0 names only tools that exist', () => {
  it('with the workspace plugin every tool of its table is defined, the workspace Skills active from the start', async () => {
    const coder = await h.rt.spawn({ image: 'coding-agent:v0', goal: 'code', workingDirectory: a });
    for (const tool of coder.toolTable) expect(h.rt.hasTool(tool), tool).toBe(true);
    expect(coder.toolTable).toEqual(expect.arrayContaining([...WORKSPACE_TOOLS]));
    expect(coder.toolTable).not.toEqual(expect.arrayContaining(['run_shell']));
    expect(coder.visibleTools).toEqual(expect.arrayContaining([...WORKSPACE_TOOLS]));
    // Visibility is never authority: the coder holds no grant yet.
    expect(await fails(h.rt, coder.pid, 'read_file', { path: 'f.txt' })).toMatchObject({ code: 'permission_denied' });
  });
});
