// The API report check: each public package's `src/index.ts` surface is committed as `<package>/api/<name>.api.md`
// (scripts/api-report.mjs), so a change to a public API shows as a diff in review. This fails when a package's
// exports or their declarations change without the report being regenerated, and says how to regenerate it.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

it('every public package matches its committed API report', () => {
  const r = spawnSync(process.execPath, ['scripts/api-report.mjs'], { cwd: ROOT, encoding: 'utf8' });
  const hint = 'If that is intended, run `node scripts/api-report.mjs --update` and commit the reports.';
  const why = `${r.stderr}\nThe public API changed. ${hint}`;
  expect(r.status, why).toBe(0);
}, 180_000);

it('the report lists exports from source, without internal paths or absolute file names', () => {
  const r = spawnSync(
    process.execPath,
    [
      '-e',
      `import('./scripts/api-report.mjs').then(m => {
    const [sdk] = m.computeReports(['sdk']);
    process.stdout.write(sdk.actual);
  })`,
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toContain('function isTerminalProcessStatus(status: string | null | undefined): status is TerminalProcessStatus;');
  expect(r.stdout).toContain("export { z } from 'zod';");
  expect(r.stdout).not.toMatch(/\/work\/|import\("/);
}, 180_000);

it('no public index re-exports from ./internal: what a package exports is declared in its public files', () => {
  const r = spawnSync(
    process.execPath,
    [
      '-e',
      `import('./scripts/api-report.mjs').then(m => {
    const fs = require('node:fs');
    for (const p of m.publicPackages()) {
      const text = fs.readFileSync(p.entry, 'utf8');
      for (const line of text.split('\\n'))
        if (/from '\\.\\/internal\\//.test(line) && /^export/.test(line)) console.log(p.name + ': ' + line);
    }
  })`,
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toBe('');
}, 60_000);
