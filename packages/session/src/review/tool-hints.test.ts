import { expect, it } from 'vitest';
import { explicitToolHints } from './tool-hints.js';

it('hints are backticked names of callable tools not yet observed, in goal order, once each, never process_exit', () => {
  const table = ['git_diff', 'run_shell', 'process_exit', 'list_files'];
  const goal =
    'Use `run_shell` to test, then `git_diff` and `run_shell` again; mention list_files plainly; `unknown_tool`; `process_exit`.';
  expect(explicitToolHints(goal, table, [])).toEqual(['run_shell', 'git_diff']);
  expect(explicitToolHints(goal, table, ['run_shell'])).toEqual(['git_diff']);
  expect(explicitToolHints('no tools here', table, [])).toEqual([]);
});
