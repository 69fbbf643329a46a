import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BIN } from './testing/libos-bin.js';

// The README's command blocks marked `<!-- runnable: <id> -->` run as written: each in a fresh folder, with `libos`
// on the PATH (the built binary), under bash -e, and must exit 0. Some ids also check what the block prints. Every
// other shell block says why it is not run (`<!-- not runnable: <reason> -->`), so a new example cannot slip by.

const README = fileURLToPath(new URL('../../../README.md', import.meta.url));

/** What a block must also print, by id (beyond exiting 0). */
const EXPECT: Readonly<Record<string, (out: string) => void>> = {
  'first-steps': (out) => {
    expect(out).toMatch(/"tool_names": \[\s*"create_memory_namespace",\s*"list_memory_namespace",\s*"create_memory_object"/);
    expect(out).toMatch(/ledger\s+plan\s+1\s+unavailable/);
    expect(out).toMatch(/tool\.call\s+tool:create_memory_object\s+ok/);
    expect(out).toMatch(/@libos\/object-memory\s+0\.1\.0\s+standard/);
  },
  'memory-through-run': (out) => {
    // In one runtime the read after the append succeeds (a failed call would print read_memory_object!<code>).
    expect(out).toMatch(/^q4\s+pid_\S+\s+turn\s+completed\s+read_memory_object$/m);
    expect(out).not.toContain('!');
    expect(out).toContain('processes: exited 1');
  },
  'host-config': (out) => {
    expect(out).toContain('"timezone": "Asia/Shanghai"');
    expect(out).toMatch(/"small": \{\s*"provider": "openai",\s*"model": "qwen2\.5:7b"/);
    expect(out).toContain('"default_profile": "small"');
  },
  'ask-the-owner': (out) => {
    expect(out).toContain('human requests pending: 1');
    expect(out).toMatch(/approved \("the north coast"\)/);
    expect(out).toMatch(/resumed\s+completed\s+ask_human/);
    expect(out).toMatch(/status:\s+exited/);
  },
  demo: (out) => expect(out).toContain('Visibility is never authority'),
  'http-api': (out) => {
    expect(out).toMatch(/"tool":"process_exit","payload":\{"status":"exited"/);
    expect(out).toContain('event: event.appended');
  },
  'memory-through-serve': (out) => {
    // The read inside the served runtime sees the appended entry...
    expect(out).toMatch(/"payload": \{\s*"entries": \[\s*\{\s*"item": "coffee",\s*"amount": 3\s*\}\s*\]\s*\}/);
    // ...and once the server is gone the Object is still listed, its payload not available.
    expect(out).toMatch(/ledger\s+plan\s+2\s+unavailable/);
  },
};

/** Every fenced shell block, with the marker line above it (or null). */
function shellBlocks(markdown: string): { marker: string | null; code: string }[] {
  const out: { marker: string | null; code: string }[] = [];
  const re = /(?:^(<!--[^\n]*-->)\r?\n)?^```sh\r?\n([\s\S]*?)\r?\n```/gm;
  for (let m = re.exec(markdown); m; m = re.exec(markdown)) out.push({ marker: m[1] ?? null, code: m[2]! });
  return out;
}

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

const markdown = readFileSync(README, 'utf8');
const blocks = runnableBlocks(markdown);

describe('README runnable blocks', { timeout: 180_000 }, () => {
  it('the README marks its runnable blocks, the memory example among them; every other shell block says why not', () => {
    expect(blocks.map((b) => b.id)).toEqual(
      expect.arrayContaining(['first-steps', 'memory-through-serve', 'memory-through-run', 'http-api']),
    );
    expect(Object.keys(EXPECT).filter((id) => !blocks.some((b) => b.id === id))).toEqual([]);
    const unmarked = shellBlocks(markdown).filter((b) => !/^<!-- (runnable: [a-z0-9-]+|not runnable: .+) -->$/.test(b.marker ?? ''));
    expect(unmarked.map((b) => b.code.split('\n')[0])).toEqual([]);
  });

  it('the first screen keeps the two commands for a fresh machine: npm run demo and npm test', () => {
    const first = shellBlocks(markdown)[0]!;
    expect(first.code.split('\n').map((l) => l.split('#')[0]!.trim())).toEqual(['npm run demo', 'npm test']);
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
