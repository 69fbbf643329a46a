#!/usr/bin/env node
// The API report: each public package's surface (what its `src/index.ts` exports), one declaration per export,
// sorted by name, written to `<package>/api/<name>.api.md` and committed, so a change to a public API is a visible
// diff in review. Read from source with the TypeScript compiler (`@libos/*` resolved to each package's `src`, like the
// tests), so no build is needed.
//
//   node scripts/api-report.mjs            check every report (exit 1 and name the stale ones)
//   node scripts/api-report.mjs --update   rewrite the reports
//   node scripts/api-report.mjs sdk kernel check (or with --update, rewrite) some packages only
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const UPDATE_COMMAND = 'node scripts/api-report.mjs --update';

/** Every workspace package with a `src/index.ts` and a name: `{ name: '@libos/sdk', dir, short: 'sdk', entry }`. */
export function publicPackages() {
  const out = [];
  for (const group of ['packages', 'apps']) {
    for (const d of readdirSync(join(ROOT, group))) {
      const dir = join(ROOT, group, d);
      const pkgFile = join(dir, 'package.json');
      const entry = join(dir, 'src/index.ts');
      if (!existsSync(pkgFile) || !existsSync(entry)) continue;
      const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
      // apps/cli and apps/console are programs: their index is a main, not an API.
      if (pkg.bin || pkg.private) continue;
      out.push({ name: pkg.name, dir, short: d, entry });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

const NAMED = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope;
const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/**
 * A zod enum's value object (`{ b: "b"; a: "a"; }`) in sorted order: the checker prints its members in the order it
 * happened to create their literal types, which moves when unrelated files change.
 */
const sortEnumObjects = (text) =>
  text.replace(
    /\{ ((?:([A-Za-z0-9_]+): "\2"; )+)\}/g,
    (_, body) =>
      `{ ${body
        .trim()
        .split('; ')
        .map((m) => m.replace(/;$/, ''))
        .sort()
        .join('; ')}; }`,
  );

/** A type as text, without the absolute `import("/…")` paths the checker adds for types it cannot name. */
const typeText = (checker, type, at) => sortEnumObjects(checker.typeToString(type, at, NAMED).replace(/import\("[^"]+"\)\./g, ''));
const print = (node) => printer.printNode(ts.EmitHint.Unspecified, node, node.getSourceFile?.() ?? undefined);
const keepModifiers = (mods) =>
  mods?.filter(
    (m) => m.kind !== ts.SyntaxKind.ExportKeyword && m.kind !== ts.SyntaxKind.DefaultKeyword && m.kind !== ts.SyntaxKind.AsyncKeyword,
  );
const isHidden = (m) =>
  (m.name && ts.isPrivateIdentifier(m.name)) || ts.getCombinedModifierFlags(m) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected);

function functionText(checker, d, name) {
  const sig = checker.getSignatureFromDeclaration(d);
  const ret = d.type ? print(d.type) : sig ? typeText(checker, checker.getReturnTypeOfSignature(sig), d) : 'unknown';
  const tps = d.typeParameters ? `<${d.typeParameters.map(print).join(', ')}>` : '';
  return `function ${name}${tps}(${d.parameters.map(print).join(', ')}): ${ret};`;
}

function classText(d, name) {
  const members = d.members
    .filter((m) => !isHidden(m) && !ts.isClassStaticBlockDeclaration(m) && !ts.isSemicolonClassElement(m))
    .map((m) => {
      if (ts.isMethodDeclaration(m))
        return ts.factory.updateMethodDeclaration(
          m,
          keepModifiers(m.modifiers),
          m.asteriskToken,
          m.name,
          m.questionToken,
          m.typeParameters,
          m.parameters,
          m.type,
          undefined,
        );
      if (ts.isConstructorDeclaration(m)) return ts.factory.updateConstructorDeclaration(m, m.modifiers, m.parameters, undefined);
      if (ts.isPropertyDeclaration(m))
        return ts.factory.updatePropertyDeclaration(m, m.modifiers, m.name, m.questionToken, m.type, undefined);
      if (ts.isGetAccessorDeclaration(m))
        return ts.factory.updateGetAccessorDeclaration(m, m.modifiers, m.name, m.parameters, m.type, undefined);
      if (ts.isSetAccessorDeclaration(m)) return ts.factory.updateSetAccessorDeclaration(m, m.modifiers, m.name, m.parameters, undefined);
      return m;
    });
  const cls = ts.factory.updateClassDeclaration(
    d,
    keepModifiers(d.modifiers),
    ts.factory.createIdentifier(name),
    d.typeParameters,
    d.heritageClauses,
    members,
  );
  return print(cls);
}

/** The text of one declaration of an export named `name`. */
function declarationText(checker, d, name) {
  if (ts.isFunctionDeclaration(d)) return functionText(checker, d, name);
  if (ts.isClassDeclaration(d)) return classText(d, name);
  if (ts.isInterfaceDeclaration(d))
    return print(
      ts.factory.updateInterfaceDeclaration(d, keepModifiers(d.modifiers), d.name, d.typeParameters, d.heritageClauses, d.members),
    );
  if (ts.isTypeAliasDeclaration(d))
    return print(ts.factory.updateTypeAliasDeclaration(d, keepModifiers(d.modifiers), d.name, d.typeParameters, d.type));
  if (ts.isEnumDeclaration(d) || ts.isModuleDeclaration(d)) return print(d);
  if (ts.isVariableDeclaration(d)) {
    const kind = d.parent.flags & ts.NodeFlags.Const ? 'const' : 'let';
    const type = d.type ? print(d.type) : typeText(checker, checker.getTypeAtLocation(d.name), d);
    return `${kind} ${name}: ${type};`;
  }
  return `${ts.SyntaxKind[d.kind]} ${name}`;
}

/** A namespace re-export (`export * as wire from './wire.js'`): its own exports, each with its declaration. */
function namespaceText(checker, d, name, pkg, packages) {
  const mod = checker.getSymbolAtLocation(d);
  const inner = mod ? exportEntries(checker, mod, pkg, packages) : [];
  const indent = (t) => t.replace(/^(?=.)/gm, '    ');
  return `namespace ${name} {\n${inner.map((e) => indent(`// ${e.name}\n${e.text}`)).join('\n\n')}\n}`;
}

/** `{ name, text }` of each export of a module symbol, sorted by name. */
function exportEntries(checker, mod, pkg, packages) {
  const entries = [];
  for (const sym of checker.getExportsOfModule(mod)) {
    const name = sym.getName();
    const target = sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym;
    const decls = (target.declarations ?? []).filter(
      (d) => !(ts.isFunctionDeclaration(d) && d.body && target.declarations.filter(ts.isFunctionDeclaration).length > 1),
    );
    const owner = decls.length ? ownerOf(decls[0].getSourceFile().fileName, pkg, packages) : null;
    const same = name === target.getName() || target.flags & ts.SymbolFlags.ValueModule;
    const text = owner
      ? `export { ${same ? name : `${target.getName()} as ${name}`} } from '${owner}';`
      : decls
          .map((d) => (ts.isSourceFile(d) ? namespaceText(checker, d, name, pkg, packages) : declarationText(checker, d, name)))
          .join('\n');
    entries.push({ name, text });
  }
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The package a source file belongs to (`@libos/sdk`), a node module's name, or null for the package itself. */
function ownerOf(file, pkg, packages) {
  const f = file.replaceAll('\\', '/');
  const nm = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f);
  if (nm) return nm[1];
  const other = packages.find((p) => f.startsWith(`${p.dir.replaceAll('\\', '/')}/src/`));
  return other && other.name !== pkg.name ? other.name : null;
}

/** The report of one package, as committed. */
export function renderReport(program, pkg, packages) {
  const checker = program.getTypeChecker();
  const sf = program.getSourceFile(pkg.entry);
  const mod = checker.getSymbolAtLocation(sf);
  const entries = mod ? exportEntries(checker, mod, pkg, packages) : [];
  const body = entries.map((e) => `// ${e.name}\n${e.text}`).join('\n\n');
  return [
    `# API report: ${pkg.name}`,
    '',
    `The public surface of \`${relative(ROOT, pkg.entry).replaceAll('\\', '/')}\`: every export, sorted by name, with its declaration`,
    `(bodies, private members and comments left out). Generated; do not edit. After an intended change to the API run`,
    `\`${UPDATE_COMMAND}\` and commit the result with the change.`,
    '',
    '```ts',
    body,
    '```',
    '',
  ].join('\n');
}

export const reportPath = (pkg) => join(pkg.dir, 'api', `${pkg.short}.api.md`);

/** `{ pkg, path, expected, actual }` for each package named (all when none). */
export function computeReports(only = []) {
  const packages = publicPackages();
  const chosen = only.length ? packages.filter((p) => only.includes(p.short) || only.includes(p.name)) : packages;
  // tsconfig files may hold comments and trailing commas: read them as TypeScript does.
  const base = ts.readConfigFile(join(ROOT, 'tsconfig.base.json'), ts.sys.readFile).config?.compilerOptions ?? {};
  const { options } = ts.convertCompilerOptionsFromJson({ ...base, noEmit: true, declaration: false, sourceMap: false }, ROOT);
  options.paths = Object.fromEntries(packages.map((p) => [p.name, [relative(ROOT, p.entry)]]));
  options.baseUrl = ROOT;
  const program = ts.createProgram(
    chosen.map((p) => p.entry),
    options,
  );
  return chosen.map((pkg) => {
    const path = reportPath(pkg);
    return { pkg, path, expected: existsSync(path) ? readFileSync(path, 'utf8') : null, actual: renderReport(program, pkg, packages) };
  });
}

function main(argv) {
  const update = argv.includes('--update');
  const only = argv.filter((a) => !a.startsWith('--'));
  const stale = [];
  for (const r of computeReports(only)) {
    if (r.expected === r.actual) continue;
    if (update) {
      mkdirSync(dirname(r.path), { recursive: true });
      writeFileSync(r.path, r.actual);
      console.log(`wrote ${relative(ROOT, r.path)}`);
    } else stale.push(r);
  }
  for (const r of stale) {
    const want = new Set((r.expected ?? '').split('\n'));
    const got = new Set(r.actual.split('\n'));
    const added = r.actual.split('\n').filter((l) => !want.has(l));
    const removed = (r.expected ?? '').split('\n').filter((l) => !got.has(l));
    console.error(`${relative(ROOT, r.path)}: ${r.expected === null ? 'missing' : `the public API of ${r.pkg.name} changed`}`);
    for (const l of removed.slice(0, 20)) console.error(`  - ${l}`);
    for (const l of added.slice(0, 20)) console.error(`  + ${l}`);
  }
  if (stale.length) {
    console.error(
      `\n${stale.length} API report(s) out of date. If the change is intended, run \`${UPDATE_COMMAND}\` and commit the reports.`,
    );
    process.exit(1);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main(process.argv.slice(2));
