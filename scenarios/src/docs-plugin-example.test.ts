// docs/plugins.md's example is a test that must pass: this file takes the ```ts block that follows the marker
// `<!-- example: tally-plugin -->`, writes it to a fresh folder inside this package (so its imports resolve as any
// test's do: @libos/* through the vitest aliases, vitest and kysely from node_modules) and imports it. Importing it
// registers its `it(...)` tests here, so they run, pass or fail as tests of this file.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MARKER = '<!-- example: tally-plugin -->';

/** The one ```ts block right after the marker (the marker must appear once). */
function exampleBlock(markdown: string): string {
  const at = markdown.indexOf(MARKER);
  if (at < 0 || markdown.indexOf(MARKER, at + 1) >= 0) throw new Error(`docs/plugins.md must hold the marker ${MARKER} exactly once`);
  const m = /^\r?\n```ts\r?\n([\s\S]*?)\r?\n```\r?$/m.exec(markdown.slice(at + MARKER.length));
  if (m?.index !== 0) throw new Error(`docs/plugins.md: a \`\`\`ts block must follow ${MARKER} on the next line`);
  return `${m[1]!}\n`;
}

const code = exampleBlock(readFileSync(join(ROOT, 'docs/plugins.md'), 'utf8'));
// A hidden folder inside scenarios/ (not scanned as tests, ignored by git), unique per run so parallel runs never meet.
const dir = mkdtempSync(join(ROOT, 'scenarios', '.docs-example-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'tally-plugin.ts');
writeFileSync(file, code);
await import(pathToFileURL(file).href);
