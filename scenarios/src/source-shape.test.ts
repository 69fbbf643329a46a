// The shape check: no source line over 140 characters (the formatter's width; what it cannot wrap, such as a long
// string or comment, is wrapped by hand), and no source file over 400 lines unless a comment near its top says why
// it is long (`Long file: <reason>` within its first 15 lines). Offenders are listed with file:line.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAX_LINE = 140;
const MAX_FILE_LINES = 400;
const SOURCE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs)$/;
const SKIP = new Set(['node_modules', 'dist', 'coverage', 'test-artifacts']);
/** A comment line near the top that says why the file is long. */
const WHY_LONG = /^\s*(?:\/\/|\/?\*+)\s*Long file: \S/;

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name) || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (SOURCE.test(name)) out.push(path);
  }
  return out;
}

/** Every source file of the tree: the workspace folders and the root's config files. */
function treeFiles(): string[] {
  const roots = ['packages', 'apps', 'examples', 'scenarios', 'bench', 'scripts'].map((d) => join(ROOT, d));
  const top = readdirSync(ROOT)
    .filter((n) => SOURCE.test(n))
    .map((n) => join(ROOT, n));
  return [...top, ...roots.filter((d) => statSync(d, { throwIfNoEntry: false })?.isDirectory()).flatMap((d) => sourceFiles(d))];
}

/** The offenders in one file's text: `file:line (N characters)` per long line, and the file if long without a reason. */
function shapeProblems(file: string, text: string): { longLines: string[]; longFile: string | null } {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const longLines: string[] = [];
  lines.forEach((line, i) => {
    const width = [...line].length;
    if (width > MAX_LINE) longLines.push(`${file}:${i + 1} (${width} characters)`);
  });
  const why = lines.slice(0, 15).some((l) => WHY_LONG.test(l));
  const longFile = lines.length > MAX_FILE_LINES && !why ? `${file} (${lines.length} lines, no "Long file:" comment)` : null;
  return { longLines, longFile };
}

it(`no source line is over ${MAX_LINE} characters, and no file over ${MAX_FILE_LINES} lines lacks a comment saying why`, () => {
  const files = treeFiles();
  expect(files.length, 'the scan found almost no files: the walker is broken').toBeGreaterThan(300);
  const longLines: string[] = [];
  const longFiles: string[] = [];
  for (const path of files) {
    const found = shapeProblems(relative(ROOT, path), readFileSync(path, 'utf8'));
    longLines.push(...found.longLines);
    if (found.longFile) longFiles.push(found.longFile);
  }
  expect({ longLines, longFiles }).toEqual({ longLines: [], longFiles: [] });
});

it('the shape check finds a long line, a long file without a reason, and accepts a long file with one', () => {
  const short = 'const a = 1;\n';
  expect(shapeProblems('a.ts', short)).toEqual({ longLines: [], longFile: null });
  const wide = `const s = '${'x'.repeat(MAX_LINE)}';\n`;
  expect(shapeProblems('b.ts', `${short}${wide}`).longLines).toEqual([`b.ts:2 (${MAX_LINE + 13} characters)`]);
  // Characters, not bytes or UTF-16 units: 140 accented letters or emoji fit.
  expect(shapeProblems('c.ts', `${'é'.repeat(MAX_LINE)}\n${'🙂'.repeat(MAX_LINE)}\n`).longLines).toEqual([]);
  const long = short.repeat(MAX_FILE_LINES + 1);
  expect(shapeProblems('d.ts', long).longFile).toBe(`d.ts (${MAX_FILE_LINES + 1} lines, no "Long file:" comment)`);
  expect(shapeProblems('e.ts', short.repeat(MAX_FILE_LINES)).longFile).toBeNull();
  expect(shapeProblems('f.ts', `// Long file: one story per test.\n${long}`).longFile).toBeNull();
  expect(shapeProblems('g.ts', `/**\n * Long file: the table is one concept.\n */\n${long}`).longFile).toBeNull();
  expect(shapeProblems('h.ts', `${short.repeat(20)}// Long file: too far down.\n${long}`).longFile).not.toBeNull();
});
