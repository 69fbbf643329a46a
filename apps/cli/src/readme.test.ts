import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BIN } from './testing/libos-bin.js';

// The README's command blocks marked `<!-- runnable: <id> -->` run as written: each in a fresh folder, with `libos`
// on the PATH (the built binary), under bash -e, and must exit 0. Some ids also check what the block prints.

const README = fileURLToPath(new URL('../../../README.md', import.meta.url));

/** What a block must also print, by id (beyond exiting 0). */
const EXPECT: Readonly<Record<string, (out: string) => void>> = {
  'memory-through-serve': (out) => {
    // The read inside the served runtime sees the appended entry...
    expect(out).toMatch(/"payload": \{\s*"entries": \[\s*\{\s*"item": "coffee",\s*"amount": 3\s*\}\s*\]\s*\}/);
    // ...and once the server is gone the Object is still listed, its payload not available.
    expect(out).toMatch(/ledger\s+plan\s+2\s+unavailable/);
  },
};

function runnableBlocks(markdown: string): { id: string; code: string }[] {
  const out: { id: string; code: string }[] = [];
  const re = /<!-- runnable: ([a-z0-9-]+) -->\r?\n```sh\r?\n([\s\S]*?)\r?\n```/g;
  for (let m = re.exec(markdown); m; m = re.exec(markdown)) out.push({ id: m[1]!, code: m[2]! });
  return out;
}

let bin: string;
const dirs: string[] = [];
beforeAll(() => {
  assertBuilt();
  bin = mkdtempSync(join(tmpdir(), 'libos-readme-bin-'));
  dirs.push(bin);
  writeFileSync(join(bin, 'libos'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, 'libos'), 0o755);
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const blocks = runnableBlocks(readFileSync(README, 'utf8'));

describe('README runnable blocks', { timeout: 180_000 }, () => {
  it('the README marks its runnable blocks, the memory example among them', () => {
    expect(blocks.map((b) => b.id)).toContain('memory-through-serve');
  });

  for (const block of blocks) {
    it(`runs as written: ${block.id}`, () => {
      const dir = mkdtempSync(join(tmpdir(), `libos-readme-${block.id}-`));
      dirs.push(dir);
      mkdirSync(join(dir, 'home'));
      const r = spawnSync('bash', ['-euo', 'pipefail', '-c', block.code], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: join(dir, 'home') },
        timeout: 150_000,
      });
      expect(r.status, `${block.id} exited ${r.status}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`).toBe(0);
      EXPECT[block.id]?.(r.stdout);
    });
  }
});
