// The id check: every acceptance id a test cites must be defined in docs/behaviour/ (the behaviour contract), so a
// title such as `[OM-13] ...` always resolves to its rule. Ids defined there that no test cites are printed, not
// failed: they are rules still waiting for a test. The id format is documented in docs/behaviour/README.md.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BEHAVIOUR = join(ROOT, 'docs/behaviour');

/** One acceptance id, exactly: `CAP-7`, `OM-13`, `OT-65`, `K-53`, `K-8.1`, `ADV-01`, or a session family `S-C4`. */
const ID = String.raw`(?:(?:CAP|OM|OT|K|ADV|WS|CP)-[0-9]+(?:\.[0-9]+)?|S-[BCERX][0-9]+)`;
const STRICT = new RegExp(`^${ID}$`);
/** Where tests cite ids: `[ID]` in a title (template titles included), or a story table's `id: 'ID'` / `spec: 'ID'`. */
const CITED = new RegExp(String.raw`\[(${ID})\]|\b(?:id|spec):\s*'(${ID})'`, 'g');
/** Anything bracketed that starts like an id (a prefix, `-`, a digit): it must be a well-formed one. (`[OT-n]` is prose.) */
const LOOSE = /\[((?:CAP|OM|OT|K|S|ADV|WS|CP)-[A-Z]?[0-9][^\]\s]*)\]/g;
/** A definition in docs/behaviour/*.md: a list item that starts with the bold id (other bold list items are prose). */
const DEFINED = /^- \*\*((?:CAP|OM|OT|K|S|ADV|WS|CP)-[^*]*)\*\*/gm;

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) tsFiles(path, out);
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

const sourceRoots = [
  ...readdirSync(join(ROOT, 'packages')).map((p) => join(ROOT, 'packages', p, 'src')),
  ...readdirSync(join(ROOT, 'apps')).map((a) => join(ROOT, 'apps', a, 'src')),
  join(ROOT, 'scenarios/src'),
].filter((d) => statSync(d, { throwIfNoEntry: false })?.isDirectory());

/** Every cited id with the files citing it, and every bracketed id-like token that is malformed. */
function citations() {
  const cited = new Map<string, Set<string>>();
  const malformed: string[] = [];
  for (const file of sourceRoots.flatMap((d) => tsFiles(d))) {
    if (file === fileURLToPath(import.meta.url)) continue;
    const text = readFileSync(file, 'utf8');
    const where = relative(ROOT, file);
    for (const m of text.matchAll(CITED)) {
      const id = (m[1] ?? m[2])!;
      cited.set(id, (cited.get(id) ?? new Set()).add(where));
    }
    for (const m of text.matchAll(LOOSE)) if (!STRICT.test(m[1]!)) malformed.push(`${where}: [${m[1]}]`);
  }
  return { cited, malformed };
}

/** Every id defined in docs/behaviour/, with the file defining it; duplicates and malformed ids are problems. */
function definitions() {
  const defined = new Map<string, string>();
  const problems: string[] = [];
  for (const name of readdirSync(BEHAVIOUR).filter((n) => n.endsWith('.md'))) {
    const text = readFileSync(join(BEHAVIOUR, name), 'utf8');
    for (const m of text.matchAll(DEFINED)) {
      const id = m[1]!;
      if (!STRICT.test(id)) problems.push(`${name}: "${id}" is not a well-formed id`);
      else if (defined.has(id)) problems.push(`${id} is defined twice (${defined.get(id)} and ${name})`);
      else defined.set(id, name);
    }
  }
  return { defined, problems };
}

const byId = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });

it('every acceptance id a test cites is defined in docs/behaviour/, and every cited or defined id is well-formed', () => {
  const { cited, malformed } = citations();
  const { defined, problems } = definitions();
  const undefinedIds = [...cited.keys()]
    .filter((id) => !defined.has(id))
    .sort(byId)
    .map((id) => `${id} (cited in ${[...cited.get(id)!].join(', ')})`);
  const uncited = [...defined.keys()].filter((id) => !cited.has(id)).sort(byId);
  const waiting = `defined but cited by no test (${uncited.length}): ${uncited.join(' ') || 'none'}`;
  console.log(`docs ids: ${defined.size} defined, ${cited.size} cited; ${waiting}`);
  expect(cited.size, 'the scan found no cited ids at all: the scanner is broken').toBeGreaterThan(100);
  expect({ undefinedIds, malformed, problems }).toEqual({ undefinedIds: [], malformed: [], problems: [] });
});

it('the id patterns accept the documented formats and nothing else', () => {
  const good = ['CAP-7', 'OM-13', 'OT-65', 'K-53', 'K-8.1', 'ADV-01', 'WS-3', 'S-C4', 'S-R23', 'S-X1', 'S-E10', 'S-B8'];
  for (const ok of good) expect(STRICT.test(ok), ok).toBe(true);
  const bad = ['CAP7', 'OM-', 'OM-13a', 'K-8.', 'S-4', 'S-Q1', 'X-1', 'om-13', 'ADV-1.2.3'];
  for (const b of bad) expect(STRICT.test(b), b).toBe(false);
  const sample = "it('[OM-13] [S-C4] x'); story({ id: 'ADV-01', spec: 'CAP-25' })";
  expect([...sample.matchAll(CITED)].map((m) => m[1] ?? m[2])).toEqual(['OM-13', 'S-C4', 'ADV-01', 'CAP-25']);
  const loose = [...'[OM13] [OM-1x] [CAP-2] [OT-n] [K-8.]'.matchAll(LOOSE)].map((m) => m[1]!);
  expect(loose.filter((t) => !STRICT.test(t))).toEqual(['OM-1x', 'K-8.']);
});
