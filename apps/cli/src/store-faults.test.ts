import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BIN, expectRefused, libosOn, tempStore, type Ran } from './testing/libos-bin.js';

// A store the CLI cannot use is one line naming the file with the fault's own code, exit 1, the file untouched.

let dir: string;
let db: string;
beforeAll(() => {
  assertBuilt();
  ({ dir, db } = tempStore('libos-store-faults-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs the binary unable to write a file it lacks write permission on. Root may write any file, so as root the
 * binary runs without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH (setpriv, util-linux): a 0444 file is then really
 * read-only to it, and SQLite opens it read-only, as for any other user.
 */
function libosWithoutOverride(path: string, ...args: string[]): Ran {
  const caps = '-dac_override,-dac_read_search';
  const [cmd, argv] =
    process.getuid?.() === 0
      ? ['setpriv', [`--bounding-set=${caps}`, `--inh-caps=${caps}`, '--', process.execPath, BIN, '--db', path, ...args]]
      : [process.execPath, [BIN, '--db', path, ...args]];
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('libos on a store it cannot use', { timeout: 120_000 }, () => {
  it('[K-8.7] a read-only store file is one line store_read_only naming the file, exit 1, the file unchanged', () => {
    const { json } = libosOn(db);
    json('spawn', '--goal', 'x');
    // The same command works while the file is writable: the refusal below is the read-only file's.
    expect(libosWithoutOverride(db, 'ps').code).toBe(0);
    chmodSync(db, 0o444);
    const bytes = readFileSync(db);
    for (const cmd of [['ps'], ['spawn', '--goal', 'y']]) {
      expectRefused(libosWithoutOverride(db, ...cmd), 1, `store_read_only: store ${db} is read-only`);
    }
    expect(readFileSync(db).equals(bytes)).toBe(true);
    expect(statSync(db).mode & 0o777).toBe(0o444);
  });

  it('[K-8.7] a garbage file and a directory are one line each naming the path, exit 1', () => {
    const garbage = join(dir, 'garbage.db');
    writeFileSync(garbage, 'not a database at all, just text\n'.repeat(200));
    expectRefused(libosOn(garbage).run('ps'), 1, `store_corrupt: store ${garbage} is not a SQLite database`);
    const folder = join(dir, 'folder.db');
    mkdirSync(folder);
    expectRefused(libosOn(folder).run('ps'), 1, `not_a_libos_store: store ${folder} is a directory`);
  });
});
