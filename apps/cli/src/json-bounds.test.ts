import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, expectRefused, libosOn, tempStore } from './testing/libos-bin.js';

// JSON arguments of the CLI are held to the shared bounds (@libos/sdk JSON_LIMITS) before the store is opened:
// too deep is one line `invalid_arguments` naming the field and the bound, exit 1, nothing written.

let dir: string;
let db: string;
beforeAll(() => {
  assertBuilt();
  ({ dir, db } = tempStore('libos-json-bounds-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const nestedText = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

describe('libos JSON arguments', { timeout: 120_000 }, () => {
  it('[K-8.6] libos send with a message nested 5,000 deep is one line invalid_arguments naming payload and depth 100, exit 1', () => {
    const { run, json } = libosOn(db);
    const pid = json('spawn', '--goal', 'read mail').pid;
    const before = json('events', '--limit', '10000').length;
    for (const flags of [[], ['--interrupt']]) {
      const r = run('send', pid, nestedText(5_000), ...flags);
      expectRefused(r, 1, 'invalid_arguments: payload: nested deeper than 100 levels');
      expect(r.stderr).not.toMatch(/call stack|internal_error/);
    }
    expect(json('events', '--limit', '10000')).toHaveLength(before);
    expect(run('send', pid, nestedText(100)).code).toBe(0);
  });

  it('[K-8.6] libos call with an argument nested 5,000 deep is refused the same way, naming the argument', () => {
    const { run, json } = libosOn(db);
    const pid = json('spawn', '--goal', 'call').pid;
    const audit = json('audit', '--limit', '10000').length;
    expectRefused(
      run('call', pid, 'discover_skills', `{"query":${nestedText(5_000)}}`),
      1,
      'invalid_arguments: query: nested deeper than 100 levels',
    );
    expect(json('audit', '--limit', '10000')).toHaveLength(audit);
  });
});
