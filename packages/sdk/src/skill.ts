import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { canonicalSha256, sha256Hex } from './canonical-json.js';
import { LibosError } from './errors.js';
import { TOOL_NAME_PATTERN } from './tool.js';

/** Skill names: `^[a-z0-9]+(-[a-z0-9]+)*$`, at most 64 chars, equal to the Skill's folder name. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const SKILL_LIMITS = { name: 64, description: 1024, compatibility: 500, body: 65_536, metadataValue: 1024 } as const;
const ALLOWED_KEYS = new Set(['name', 'description', 'license', 'compatibility', 'allowed-tools', 'metadata']);

/** Where a SKILL.md came from: its text, its folder name and a path for messages. */
export interface SkillSource {
  readonly path: string;
  readonly dirName: string;
  readonly text: string;
}

/** A parsed, valid SKILL.md. */
export interface SkillManifest {
  readonly name: string;
  readonly description: string;
  readonly allowedTools: readonly string[];
  readonly license?: string;
  readonly compatibility?: string;
  readonly metadata: Readonly<Record<string, string>>;
  /** The instructions (markdown after the frontmatter). */
  readonly body: string;
  readonly path: string;
  /** sha256 of the canonical package JSON (frontmatter fields plus the body's hash). */
  readonly packageSha256: string;
}

/** One thing wrong with a SKILL.md, naming the file and the field. */
export interface SkillProblem {
  readonly file: string;
  readonly field: string;
  readonly message: string;
}

export type SkillParseResult =
  | { readonly ok: true; readonly skill: SkillManifest }
  | { readonly ok: false; readonly problems: readonly SkillProblem[] };

/**
 * Reads a SKILL.md from a file path or `file:` URL.
 *
 * @example
 * const source = skillFromFile(new URL('../skills/agent-libos-object-memory/SKILL.md', import.meta.url));
 */
export function skillFromFile(file: string | URL): SkillSource {
  const path = typeof file === 'string' ? file : fileURLToPath(file);
  return { path, dirName: basename(dirname(path)), text: readFileSync(path, 'utf8') };
}

/** A SKILL.md given as text (tests, generated Skills). `dirName` stands for its folder. */
export function skillFromText(text: string, dirName: string, path = `${dirName}/SKILL.md`): SkillSource {
  return { path, dirName, text };
}

/**
 * Parses and validates a SKILL.md (standard Agent Skills frontmatter). Never throws on bad input: returns every problem.
 *
 * @example
 * const r = parseSkill(skillFromText('---\nname: echo\ndescription: Echo text.\nallowed-tools: echo\n---\nUse echo.', 'echo'));
 * if (r.ok) r.skill.allowedTools; // ['echo']
 */
export function parseSkill(source: SkillSource): SkillParseResult {
  const file = source.path;
  const problems: SkillProblem[] = [];
  const bad = (field: string, message: string) => problems.push({ file, field, message });
  const lines = source.text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trim() !== '---') {
    bad('frontmatter', 'line 1 must be "---" opening the YAML frontmatter');
    return { ok: false, problems };
  }
  const close = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
  if (close < 0) {
    bad('frontmatter', 'no closing "---" after the YAML frontmatter');
    return { ok: false, problems };
  }
  let fm: unknown;
  try {
    fm = parseYaml(lines.slice(1, close).join('\n'));
  } catch (err) {
    bad('frontmatter', `YAML does not parse: ${(err as Error).message.split('\n')[0]}`);
    return { ok: false, problems };
  }
  if (fm === null || typeof fm !== 'object' || Array.isArray(fm)) {
    bad('frontmatter', 'must be a YAML mapping');
    return { ok: false, problems };
  }
  const data = fm as Record<string, unknown>;
  for (const key of Object.keys(data)) if (!ALLOWED_KEYS.has(key)) bad(key, `unknown key (allowed: ${[...ALLOWED_KEYS].join(', ')})`);

  const name = data.name;
  if (typeof name !== 'string' || name === '') bad('name', 'is required and must be a string');
  else {
    if (name.length > SKILL_LIMITS.name) bad('name', `must be at most ${SKILL_LIMITS.name} characters (got ${name.length})`);
    if (!SKILL_NAME_PATTERN.test(name)) bad('name', `must match ${SKILL_NAME_PATTERN} (got ${JSON.stringify(name)})`);
    if (name !== source.dirName) bad('name', `must equal its folder name ${JSON.stringify(source.dirName)} (got ${JSON.stringify(name)})`);
  }
  const description = data.description;
  if (typeof description !== 'string' || description.trim() === '') bad('description', 'is required and must be a non-empty string');
  else if (description.length > SKILL_LIMITS.description)
    bad('description', `must be at most ${SKILL_LIMITS.description} characters (got ${description.length})`);

  let allowedTools: string[] = [];
  const at = data['allowed-tools'];
  if (at === undefined || at === null) allowedTools = [];
  else if (typeof at === 'string') allowedTools = at.split(/\s+/).filter(Boolean);
  else if (Array.isArray(at) && at.every((t) => typeof t === 'string')) allowedTools = at as string[];
  else bad('allowed-tools', 'must be a space-separated string or a YAML list of strings');
  const seen = new Set<string>();
  for (const t of allowedTools) {
    if (!TOOL_NAME_PATTERN.test(t)) bad('allowed-tools', `${JSON.stringify(t)} is not a valid tool name (${TOOL_NAME_PATTERN})`);
    if (seen.has(t)) bad('allowed-tools', `${JSON.stringify(t)} is listed twice`);
    seen.add(t);
  }
  for (const key of ['license', 'compatibility'] as const) {
    const v = data[key];
    if (v !== undefined && typeof v !== 'string') bad(key, 'must be a string');
  }
  if (typeof data.compatibility === 'string' && data.compatibility.length > SKILL_LIMITS.compatibility) {
    bad('compatibility', `must be at most ${SKILL_LIMITS.compatibility} characters`);
  }
  const metadata: Record<string, string> = {};
  const md = data.metadata;
  if (md !== undefined && md !== null) {
    if (typeof md !== 'object' || Array.isArray(md)) bad('metadata', 'must be a mapping of strings to strings');
    else
      for (const [k, v] of Object.entries(md)) {
        if (typeof v !== 'string') bad(`metadata.${k}`, 'must be a string');
        else if (v.length > SKILL_LIMITS.metadataValue) bad(`metadata.${k}`, `must be at most ${SKILL_LIMITS.metadataValue} characters`);
        else metadata[k] = v;
      }
  }
  const body = lines
    .slice(close + 1)
    .join('\n')
    .trim();
  if (body === '') bad('body', 'the instructions after the frontmatter must not be empty');
  if (Buffer.byteLength(body, 'utf8') > SKILL_LIMITS.body) bad('body', `must be at most ${SKILL_LIMITS.body} bytes`);
  if (problems.length > 0) return { ok: false, problems };

  const base = {
    name: name as string,
    description: description as string,
    allowedTools,
    ...(typeof data.license === 'string' ? { license: data.license } : {}),
    ...(typeof data.compatibility === 'string' ? { compatibility: data.compatibility } : {}),
    metadata,
  };
  const packageSha256 = canonicalSha256({ ...base, instructions_sha256: sha256Hex(body) });
  return { ok: true, skill: Object.freeze({ ...base, body, path: file, packageSha256 }) };
}

/** Formats problems one a line: `file: field: message`. */
export function formatSkillProblems(problems: readonly SkillProblem[]): string {
  return problems.map((p) => `${p.file}: ${p.field}: ${p.message}`).join('\n');
}

/** Parses or throws `skill_invalid` naming the file and field of every problem. */
export function parseSkillOrThrow(source: SkillSource): SkillManifest {
  const r = parseSkill(source);
  if (r.ok) return r.skill;
  throw new LibosError('skill_invalid', formatSkillProblems(r.problems), { details: { problems: r.problems } });
}
