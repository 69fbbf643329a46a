// The example check: every `@example` in a doc comment under packages/*/src is TypeScript that compiles against the
// sources. An example is its ```ts blocks, or its whole text when it has none. Each is typechecked with the
// TypeScript compiler API in the scope of the file it documents (so it may call that file's functions, exported or
// not), plus its own imports, plus EXAMPLE_CONTEXT below: what a README would have imported and the values a reader
// has in hand (`pid`, `ctx`, `scope`, `rt`, ...). Anything else an example uses, it imports or declares. Problems
// are listed as file:line of the example's line.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Names an example may use without importing them (declared as globals; a file's own names shadow them). */
const EXAMPLE_CONTEXT = `
import type { Kysely } from 'kysely';
import type * as sdk from '@libos/sdk';
import type * as kernel from '@libos/kernel';
import type * as capabilitiesPackage from '@libos/capabilities';
import type * as objectMemoryPackage from '@libos/object-memory';
import type * as tasksPackage from '@libos/tasks';
import type * as sessionPackage from '@libos/session';
import type * as workspacePackage from '@libos/workspace';
import type * as checkpointsPackage from '@libos/checkpoints';
import type * as vitest from 'vitest';
import type * as clientPackage from '@libos/client';
declare global {
  // A test's vocabulary, for the examples of the plugin test kit.
  const describe: typeof vitest.describe;
  const it: typeof vitest.it;
  const expect: typeof vitest.expect;
  // What a README would have imported: the runtime, the standard plugins, the sdk's service names.
  const openRuntime: typeof kernel.openRuntime;
  const ScriptedProvider: typeof kernel.ScriptedProvider;
  const providerFromProfile: typeof kernel.providerFromProfile;
  const capabilities: typeof capabilitiesPackage.capabilities;
  const objectMemory: typeof objectMemoryPackage.objectMemory;
  const tasks: typeof tasksPackage.tasks;
  const session: typeof sessionPackage.session;
  const workspace: typeof workspacePackage.workspace;
  const checkpoints: typeof checkpointsPackage.checkpoints;
  const SERVICE_NAMES: typeof sdk.SERVICE_NAMES;
  const z: typeof sdk.z;
  // What the reader has in hand: a process, an Object, a namespace, a tool's context, a service scope, a runtime, the
  // store, its path, a tool call's arguments, an LLM provider, a client of a served runtime, the sdk's services.
  const pid: string;
  const oid: string;
  const ns: string;
  const ctx: sdk.ToolContext;
  const scope: sdk.ServiceScope;
  const rt: kernel.Runtime;
  const db: Kysely<any>;
  const path: string;
  const args: Readonly<Record<string, unknown>>;
  const provider: kernel.LlmProvider;
  const client: clientPackage.LibosClient;
  const objects: sdk.ObjectsService;
  const processes: sdk.ProcessService;
}
export {};
`;

interface Example {
  /** Where the example's code starts: `file:line` of its first line. */
  readonly file: string;
  readonly lines: readonly { readonly text: string; readonly line: number }[];
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The examples of one file: for each `@example` tag, its ```ts blocks, or its whole text when it has no fence. */
function examplesOf(file: string, text: string): Example[] {
  const out: Example[] = [];
  for (const comment of text.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    const first = text.slice(0, comment.index).split('\n').length;
    const body = comment[0].split('\n').map((raw, i) => ({
      text: raw
        .replace(/^\s*\/\*\*\s?/, '')
        .replace(/\s*\*\/\s*$/, '')
        .replace(/^\s*\* ?/, ''),
      line: first + i,
    }));
    for (let i = 0; i < body.length; i++) {
      if (!/^\s*@example\b/.test(body[i]!.text)) continue;
      let end = i + 1;
      while (end < body.length && !/^\s*@\w+/.test(body[end]!.text)) end++;
      const tag = body.slice(i + 1, end);
      const fenced: { text: string; line: number }[] = [];
      let inside: 'ts' | 'other' | null = null;
      for (const l of tag) {
        const fence = /^\s*```\s*(\w*)/.exec(l.text);
        if (fence) inside = inside === null ? (/^(ts|typescript|)$/.test(fence[1]!) ? 'ts' : 'other') : null;
        else if (inside === 'ts') fenced.push(l);
      }
      const hasFence = tag.some((l) => /^\s*```/.test(l.text));
      out.push({ file, lines: hasFence ? fenced : tag });
    }
  }
  return out;
}

/** Every name a source file declares or imports at its top level (an example's import of one of them is dropped). */
function topLevelNames(sf: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const s of sf.statements) {
    if (ts.isImportDeclaration(s) && s.importClause) {
      const c = s.importClause;
      if (c.name) names.add(c.name.text);
      if (c.namedBindings && ts.isNamespaceImport(c.namedBindings)) names.add(c.namedBindings.name.text);
      if (c.namedBindings && ts.isNamedImports(c.namedBindings)) for (const e of c.namedBindings.elements) names.add(e.name.text);
    } else if (ts.isVariableStatement(s)) {
      for (const d of s.declarationList.declarations) if (ts.isIdentifier(d.name)) names.add(d.name.text);
    } else if ('name' in s && s.name && ts.isIdentifier(s.name as ts.Node)) names.add((s.name as ts.Identifier).text);
  }
  return names;
}

interface Piece {
  readonly text: string;
  /** The source line it came from (a problem in it is reported there). */
  readonly line: number;
}

/**
 * The examples of one file as one module: the file's own text (so an example may use its names, exported or not),
 * then every example's imports (less the names the file or an earlier example already has), then each example in an
 * async function of its own whose parameters are the example's `declare const`s (what the reader has in hand).
 */
function examplesModule(source: ts.SourceFile, examples: readonly Example[]): Piece[] {
  const taken = topLevelNames(source);
  const imports: Piece[] = [];
  const bodies: Piece[] = [];
  for (const ex of examples) {
    const code = ex.lines.map((l) => l.text).join('\n');
    const parsed = ts.createSourceFile('example.ts', code, ts.ScriptTarget.ES2022, true);
    const lineOf = (pos: number) => parsed.getLineAndCharacterOfPosition(pos).line;
    const first = ex.lines[0]?.line ?? 0;
    const params: Piece[] = [];
    const moved = new Set<number>();
    for (const s of parsed.statements) {
      const from = lineOf(s.getStart());
      const to = lineOf(s.getEnd());
      const declared = ts.isVariableStatement(s) && (ts.getModifiers(s) ?? []).some((m) => m.kind === ts.SyntaxKind.DeclareKeyword);
      if (!declared && !ts.isImportDeclaration(s)) continue;
      for (let l = from; l <= to; l++) moved.add(l);
      if (declared) {
        for (const d of s.declarationList.declarations)
          params.push({ text: `${d.getText(parsed)},`, line: ex.lines[lineOf(d.getStart())]!.line });
        continue;
      }
      if (!ts.isImportDeclaration(s)) continue;
      const c = s.importClause;
      const spec = s.moduleSpecifier.getText(parsed);
      const line = ex.lines[from]!.line;
      if (!c) {
        imports.push({ text: `import ${spec};`, line });
        continue;
      }
      const fresh = (name: string) => !taken.has(name) && (taken.add(name), true);
      const kept: string[] = [];
      if (c.name && fresh(c.name.text)) kept.push(c.name.text);
      const nb = c.namedBindings;
      if (nb && ts.isNamespaceImport(nb) && fresh(nb.name.text)) kept.push(`* as ${nb.name.text}`);
      if (nb && ts.isNamedImports(nb)) {
        const named = nb.elements.filter((e) => fresh(e.name.text)).map((e) => e.getText(parsed));
        if (named.length > 0) kept.push(`{ ${named.join(', ')} }`);
      }
      if (kept.length > 0) imports.push({ text: `import ${c.isTypeOnly ? 'type ' : ''}${kept.join(', ')} from ${spec};`, line });
    }
    // `export` has no place in a function body: it is dropped (an exported declaration stays a declaration).
    const exported = new Set<number>();
    for (const s of parsed.statements) {
      const mods = ts.canHaveModifiers(s) ? (ts.getModifiers(s) ?? []) : [];
      if (mods.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) exported.add(lineOf(s.getStart()));
    }
    const rest = ex.lines
      .map((l, i) => (exported.has(i) ? { ...l, text: l.text.replace(/\bexport\s+(default\s+)?/, '') } : l))
      .filter((_, i) => !moved.has(i));
    bodies.push({ text: 'void (async (', line: first }, ...params, { text: ') => {', line: first }, ...rest, { text: '});', line: first });
  }
  const pieces = [{ text: '', line: examples[0]?.lines[0]?.line ?? 0 }, ...imports, ...bodies];
  // One piece, one line: a declaration written over several lines keeps its first line for all of them.
  return pieces.flatMap((p) => p.text.split('\n').map((text) => ({ text, line: p.line })));
}

/** Typechecks every example of packages/*\/src in one program; returns `file:line message` per problem. */
function checkExamples(): { count: number; problems: string[] } {
  const files = readdirSync(join(ROOT, 'packages'))
    .map((p) => join(ROOT, 'packages', p, 'src'))
    .filter((d) => statSync(d, { throwIfNoEntry: false })?.isDirectory())
    .flatMap((d) => sourceFiles(d));
  const virtual = new Map<string, string>();
  const where = new Map<string, { file: string; sourceLines: number; lineOf: number[] }>();
  let count = 0;
  for (const path of files) {
    const text = readFileSync(path, 'utf8');
    if (!text.includes('@example')) continue;
    const examples = examplesOf(relative(ROOT, path), text);
    if (examples.length === 0) continue;
    count += examples.length;
    const pieces = examplesModule(ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true), examples);
    const name = join(dirname(path), `${basename(path, '.ts')}.examples.ts`);
    virtual.set(name, `${text}\n${pieces.map((p) => p.text).join('\n')}\n`);
    where.set(name, { file: relative(ROOT, path), sourceLines: text.split('\n').length, lineOf: pieces.map((p) => p.line) });
  }
  const context = join(ROOT, 'packages/kernel/src/example-context.d.ts');
  virtual.set(context, EXAMPLE_CONTEXT);
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.base.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const host = ts.createCompilerHost({ ...options, noEmit: true });
  const { readFile, fileExists, getSourceFile } = host;
  host.readFile = (f) => virtual.get(f) ?? readFile.call(host, f);
  host.fileExists = (f) => virtual.has(f) || fileExists.call(host, f);
  host.getSourceFile = (f, lang, ...rest) => {
    const text = virtual.get(f);
    return text !== undefined ? ts.createSourceFile(f, text, lang) : getSourceFile.call(host, f, lang, ...rest);
  };
  const program = ts.createProgram([...virtual.keys()], { ...options, noEmit: true }, host);
  const problems: string[] = [];
  for (const [name, w] of where) {
    const sf = program.getSourceFile(name)!;
    for (const d of [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]) {
      if (d.start === undefined) continue;
      const at = sf.getLineAndCharacterOfPosition(d.start).line - w.sourceLines;
      if (at < 0) continue; // the documented file's own text: its package typecheck reports that
      const line = w.lineOf[Math.min(at, w.lineOf.length - 1)]!;
      problems.push(`${w.file}:${line} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    }
  }
  return { count, problems };
}

it('every @example in packages/*/src compiles against the sources (file:line of each problem)', () => {
  const { count, problems } = checkExamples();
  expect(count, 'the scan found almost no examples: the extractor is broken').toBeGreaterThan(100);
  expect(problems).toEqual([]);
}, 300_000);

it('the extractor takes ```ts blocks when an example has them, and the whole example when it has none', () => {
  const text = [
    '/**',
    ' * Adds.',
    ' * @example',
    ' * add(1, 2); // 3',
    ' * @returns the sum',
    ' */',
    '/**',
    ' * @example',
    ' * Prose first.',
    ' * ```ts',
    ' * add(2, 2);',
    ' * ```',
    ' * ```sh',
    ' * libos ps',
    ' * ```',
    ' */',
  ].join('\n');
  const [plain, fenced] = examplesOf('a.ts', text);
  expect(plain!.lines).toEqual([{ text: 'add(1, 2); // 3', line: 4 }]);
  expect(fenced!.lines).toEqual([{ text: 'add(2, 2);', line: 11 }]);
  const source = ts.createSourceFile('a.ts', "import { add } from './add.js';\nconst two = 2;\n", ts.ScriptTarget.ES2022, true);
  const first: Example = {
    file: 'a.ts',
    lines: [
      { text: "import { add, sub } from './add.js';", line: 7 },
      { text: 'declare const three: number;', line: 8 },
      { text: 'export const two = add(1, three);', line: 9 },
    ],
  };
  const second: Example = {
    file: 'a.ts',
    lines: [
      { text: "import { sub } from './add.js';", line: 12 },
      { text: 'sub(2, 1);', line: 13 },
    ],
  };
  const pieces = examplesModule(source, [first, second]);
  // The file's own `add` is not imported again, nor `sub` twice; a `declare const` is a parameter of the example's
  // function; the example's `two` (no longer exported) lives in that function.
  expect(pieces.map((p) => p.text)).toEqual([
    '',
    "import { sub } from './add.js';",
    'void (async (',
    'three: number,',
    ') => {',
    'const two = add(1, three);',
    '});',
    'void (async (',
    ') => {',
    'sub(2, 1);',
    '});',
  ]);
  expect(pieces.map((p) => p.line)).toEqual([7, 7, 7, 8, 7, 9, 7, 12, 12, 13, 12]);
});
