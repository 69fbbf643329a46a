import { expect, it } from 'vitest';
import { parseBranches, parseLog, parseStatus } from './git-parse.js';

it('parses porcelain v1 -z status with branch, upstream distance, renames and untracked paths', () => {
  const out = '## main...origin/main [ahead 2, behind 1]\0 M src/a.ts\0R  new name.ts\0old name.ts\0?? notes/é.md\0';
  expect(parseStatus(out)).toEqual({
    branch: 'main',
    upstream: 'origin/main',
    ahead: 2,
    behind: 1,
    entries: [
      { path: 'src/a.ts', orig_path: null, index: ' ', worktree: 'M' },
      { path: 'new name.ts', orig_path: 'old name.ts', index: 'R', worktree: ' ' },
      { path: 'notes/é.md', orig_path: null, index: '?', worktree: '?' },
    ],
  });
  expect(parseStatus('## No commits yet on main\0').branch).toBe('main');
  expect(parseStatus('## HEAD (no branch)\0').branch).toBeNull();
});

it('parses log records and branch lines', () => {
  const log =
    'abc\x1fp1 p2\x1fAda\x1fada@x\x1f2026-01-01T00:00:00+00:00\x1ffix: a | ' +
    'b\x1e\ndef\x1f\x1fBo\x1fbo@x\x1f2026-01-02T00:00:00+00:00\x1finit\x1e\n';
  expect(parseLog(log)).toEqual([
    {
      commit: 'abc',
      parents: ['p1', 'p2'],
      author_name: 'Ada',
      author_email: 'ada@x',
      date: '2026-01-01T00:00:00+00:00',
      subject: 'fix: a | b',
    },
    { commit: 'def', parents: [], author_name: 'Bo', author_email: 'bo@x', date: '2026-01-02T00:00:00+00:00', subject: 'init' },
  ]);
  expect(parseBranches('main\x1f*\x1fabc\nfeature\x1f \x1fdef\n')).toEqual([
    { name: 'main', current: true, commit: 'abc' },
    { name: 'feature', current: false, commit: 'def' },
  ]);
});
