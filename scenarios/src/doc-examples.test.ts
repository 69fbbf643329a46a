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

/**
 * An example as a piece of the file it documents: its imports and `declare`s at the top level, the rest in a block of
 * its own (so its names may shadow the file's).
 */
function exampleModule(source: ts.SourceFile, ex: Example): { text: string; lineOf: number[] } {
  const code = ex.lines.map((l) => l.text).join('\n');
  const parsed = ts.createSourceFile('example.ts', code, ts.ScriptTarget.ES2022, true);
  const taken = topLevelNames(source);
  const imports: { text: string; line: number }[] = [];
  const importLines = new Set<number>();
  for (const s of parsed.statements) {
    const ambient = ts.canHaveModifiers(s) && (ts.getModifiers(s) ?? []).some((m) => m.kind === ts.SyntaxKind.DeclareKeyword);
    if (!ts.isImportDeclaration(s) && !ambient) continue;
    const from = parsed.getLineAndCharacterOfPosition(s.getStart()).line;
    const to = parsed.getLineAndCharacterOfPosition(s.getEnd()).line;
    for (let l = from; l <= to; l++) importLines.add(l);
    if (ambient) {
      // `declare const x: T;` says what the reader has in hand: it goes beside the imports, at the top level.
      for (let l = from; l <= to; l++) imports.push(ex.lines[l]!);
      continue;
    }
    if (!ts.isImportDeclaration(s)) continue;
    const c = s.importClause;
    const spec = s.moduleSpecifier.getText(parsed);
    const kept: string[] = [];
    if (c?.name && !taken.has(c.name.text)) kept.push(c.name.text);
    const nb = c?.namedBindings;
    if (nb && ts.isNamespaceImport(nb) && !taken.has(nb.name.text)) kept.push(`* as ${nb.name.text}`);
    if (nb && ts.isNamedImports(nb)) {
      const named = nb.elements.filter((e) => !taken.has(e.name.text)).map((e) => e.getText(parsed));
      if (named.length > 0) kept.push(`{ ${named.join(', ')} }`);
    }
    const typeOnly = c?.isTypeOnly ? 'type ' : '';
    const line = ex.lines[from]!.line;
    if (!c) imports.push({ text: `import ${spec};`, line });
    else if (kept.length > 0) imports.push({ text: `import ${typeOnly}${kept.join(', ')} from ${spec};`, line });
  }
  // `export` has no place in the example's block: it is blanked (an exported declaration stays a declaration).
  const exported = new Set<number>();
  for (const s of parsed.statements) {
    const mods = ts.canHaveModifiers(s) ? (ts.getModifiers(s) ?? []) : [];
    if (mods.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) exported.add(parsed.getLineAndCharacterOfPosition(s.getStart()).line);
  }
  const rest = ex.lines
    .map((l, i) => (exported.has(i) ? { ...l, text: l.text.replace(/\bexport\s+(default\s+)?/, '') } : l))
    .filter((_, i) => !importLines.has(i));
  const firstLine = ex.lines[0]?.line ?? 0;
  const emitted = [{ text: '', line: firstLine }, ...imports, { text: '{', line: firstLine }, ...rest, { text: '}', line: firstLine }];
  return {
    text: `${source.text}\n${emitted.map((e) => e.text).join('\n')}\n`,
    lineOf: emitted.map((e) => e.line),
  };
}

/** Typechecks every example of packages/*\/src in one program; returns `file:line message` per problem. */
function checkExamples(): { count: number; problems: string[] } {
  const files = readdirSync(join(ROOT, 'packages'))
    .map((p) => join(ROOT, 'packages', p, 'src'))
    .filter((d) => statSync(d, { throwIfNoEntry: false })?.isDirectory())
    .flatMap((d) => sourceFiles(d));
  const virtual = new Map<string, string>();
  const where = new Map<string, { file: string; sourceLines: number; lineOf: number[] }>();
  for (const path of files) {
    const text = readFileSync(path, 'utf8');
    if (!text.includes('@example')) continue;
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true);
    examplesOf(relative(ROOT, path), text).forEach((ex, n) => {
      const name = join(dirname(path), `${basename(path, '.ts')}.example-${n}.ts`);
      const m = exampleModule(source, ex);
      virtual.set(name, m.text);
      where.set(name, { file: ex.file, sourceLines: text.split('\n').length, lineOf: m.lineOf });
    });
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
  return { count: where.size, problems };
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
  const ex: Example = {
    file: 'a.ts',
    lines: [
      { text: "import { add, sub } from './add.js';", line: 7 },
      { text: 'declare const three: number;', line: 8 },
      { text: 'export const two = add(1, 1);', line: 9 },
    ],
  };
  const m = exampleModule(source, ex);
  // The file's own `add` is not imported twice; a `declare` goes to the top level; the example's `two` (no longer
  // exported) lives in its own block.
  const emitted = ["import { sub } from './add.js';", 'declare const three: number;', '{', 'const two = add(1, 1);', '}'];
  expect(m.text.split('\n').slice(4, 9)).toEqual(emitted);
  expect(m.lineOf).toEqual([7, 7, 8, 7, 9, 7]);
});
