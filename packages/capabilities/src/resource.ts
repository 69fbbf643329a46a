import { LibosError } from '@libos/sdk';

/** Resource kinds: lower_snake, starting with a letter. */
export const RESOURCE_KIND_PATTERN = /^[a-z][a-z0-9_]*$/;
/** Longest accepted resource string (after trimming). */
export const RESOURCE_MAX_LENGTH = 2048;

/**
 * A parsed, canonical resource or resource pattern.
 *
 * - `exact`: `kind:body` denotes exactly itself.
 * - `prefix`: `kind:*` (all of the kind, `root` empty) or `kind:B:*` = `kind:B` plus every `kind:B:…`.
 * - `subtree`: `kind:B/*` = `kind:B` plus every `kind:B/…`.
 */
export interface ParsedResource {
  readonly kind: string;
  readonly form: 'exact' | 'prefix' | 'subtree';
  /** The body without its wildcard (`B`); empty only for `kind:*`. */
  readonly root: string;
  /** The canonical string, e.g. `filesystem:workspace:src/*`. */
  readonly canonical: string;
}

function invalid(value: unknown, why: string): LibosError {
  const shown = typeof value === 'string' ? JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value) : typeof value;
  return new LibosError('resource_invalid', `resource ${shown}: ${why}`, { details: { field: 'resource', reason: why } });
}

/**
 * Parsed resources by the text they were parsed from: every check parses its resource and every candidate grant's,
 * turn after turn (a MemoryView checks each of its roots). Values are frozen; a text that fails is never kept. Past
 * `PARSED_MOST_CHARS` characters of kept texts (texts may be 2,048 long) the cache starts over.
 */
const PARSED = new Map<string, ParsedResource>();
const PARSED_MOST_CHARS = 1 << 20;
let parsedChars = 0;

/**
 * Parses and canonicalizes a resource: trims, collapses `//`, drops a trailing `/`.
 * Wildcards are terminal only (`kind:*`, `kind:B:*`, `kind:B/*`). Throws `resource_invalid` naming the value.
 *
 * @example
 * parseResource(' filesystem:workspace:src//a/ ').canonical; // 'filesystem:workspace:src/a'
 * parseResource('image:cc:*').form;                          // 'prefix'
 */
export function parseResource(value: unknown): ParsedResource {
  if (typeof value !== 'string') throw invalid(value, 'must be a string "kind:body"');
  const known = PARSED.get(value);
  if (known !== undefined) return known;
  const parsed = parseResourceText(value);
  if (parsedChars + value.length > PARSED_MOST_CHARS) {
    PARSED.clear();
    parsedChars = 0;
  }
  PARSED.set(value, parsed);
  parsedChars += value.length;
  return parsed;
}

function parseResourceText(value: string): ParsedResource {
  const text = value.trim();
  if (text.length === 0) throw invalid(value, 'must not be empty');
  if (text.length > RESOURCE_MAX_LENGTH) throw invalid(value, `must be at most ${RESOURCE_MAX_LENGTH} characters (got ${text.length})`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(text)) throw invalid(value, 'must not contain control characters');
  const colon = text.indexOf(':');
  if (colon < 0) throw invalid(value, 'must be typed as "kind:body" (no ":" found)');
  const kind = text.slice(0, colon);
  if (!RESOURCE_KIND_PATTERN.test(kind)) throw invalid(value, `kind ${JSON.stringify(kind)} must match ${RESOURCE_KIND_PATTERN}`);
  let body = text.slice(colon + 1).replace(/\/{2,}/g, '/');
  while (body.length > 1 && body.endsWith('/')) body = body.slice(0, -1);
  if (body === '' || body === '/') throw invalid(value, 'body must not be empty');
  const star = body.indexOf('*');
  if (star < 0) return Object.freeze({ kind, form: 'exact', root: body, canonical: `${kind}:${body}` });
  if (star !== body.length - 1) throw invalid(value, 'a wildcard "*" is allowed only as the last character');
  if (body === '*') return Object.freeze({ kind, form: 'prefix', root: '', canonical: `${kind}:*` });
  const sep = body[body.length - 2];
  const root = body.slice(0, -2);
  if ((sep !== ':' && sep !== '/') || root === '')
    throw invalid(value, 'a wildcard must be the whole body ("kind:*") or follow ":" or "/" ("kind:B:*", "kind:B/*")');
  return Object.freeze({ kind, form: sep === ':' ? 'prefix' : 'subtree', root, canonical: `${kind}:${root}${sep}*` });
}

/** Canonical string of a resource (throws `resource_invalid`). */
export function canonicalResource(value: unknown): string {
  return parseResource(value).canonical;
}

function asParsed(r: string | ParsedResource): ParsedResource {
  return typeof r === 'string' ? parseResource(r) : r;
}

const sepOf = (p: ParsedResource): string => (p.form === 'prefix' ? ':' : p.form === 'subtree' ? '/' : '');
const isAll = (p: ParsedResource): boolean => p.form === 'prefix' && p.root === '';

/** True when the concrete body `s` is in the denotation of `p` (same kind assumed). */
function member(p: ParsedResource, s: string): boolean {
  if (isAll(p) || s === p.root) return true;
  if (p.form === 'exact') return false;
  const head = p.root + sepOf(p);
  return s.length > head.length && s.startsWith(head);
}

/**
 * `covers(G, R)`: every resource `R` denotes is in `G`'s denotation (`⟦R⟧ ⊆ ⟦G⟧`). Kinds never cross.
 *
 * @example
 * covers('filesystem:workspace:src/*', 'filesystem:workspace:src/a.py');  // true
 * covers('filesystem:workspace:src/*', 'filesystem:workspace:src2/a.py'); // false
 * covers('k:a/*', 'k:a:*');                                               // false
 */
export function covers(granted: string | ParsedResource, requested: string | ParsedResource): boolean {
  const g = asParsed(granted);
  const r = asParsed(requested);
  if (g.kind !== r.kind) return false;
  if (isAll(g)) return true;
  if (isAll(r)) return false;
  if (!member(g, r.root)) return false;
  if (r.form === 'exact') return true;
  if (g.form === 'exact') return false;
  return (r.root + sepOf(r)).startsWith(g.root + sepOf(g));
}

/**
 * Every canonical resource that can cover `r` (`covers(G, r)` ⇒ `G.canonical` is in the list): `kind:*`, the root
 * itself exact and as `root:*` / `root/*`, and `head:*` / `head/*` for each head of the root that ends before a `:`
 * or `/`. At most 4 + (separators in the root) strings, so a grant lookup by (subject, resource) stays an index
 * probe per string instead of a scan of every grant of the kind.
 *
 * @example
 * coveringResources('k:a/b');  // ['k:*', 'k:a/b', 'k:a/b:*', 'k:a/b/*', 'k:a/*']
 */
export function coveringResources(r: string | ParsedResource): string[] {
  const p = asParsed(r);
  const out = new Set<string>([`${p.kind}:*`]);
  if (isAll(p)) return [...out];
  const root = p.root;
  out.add(`${p.kind}:${root}`).add(`${p.kind}:${root}:*`).add(`${p.kind}:${root}/*`);
  for (let i = 1; i < root.length; i++) {
    const c = root[i];
    if (c === ':' || c === '/') out.add(`${p.kind}:${root.slice(0, i)}${c}*`);
  }
  return [...out];
}

/**
 * `overlaps(A, B)`: the denotations intersect. Kinds never cross.
 *
 * @example
 * overlaps('filesystem:*', 'filesystem:secret');   // true
 * overlaps('k:a/*', 'k:a:*');                       // true (both hold k:a)
 * overlaps('k:a/b', 'k:a:b');                       // false
 */
export function overlaps(a: string | ParsedResource, b: string | ParsedResource): boolean {
  const x = asParsed(a);
  const y = asParsed(b);
  if (x.kind !== y.kind) return false;
  if (isAll(x) || isAll(y)) return true;
  if (member(x, y.root) || member(y, x.root)) return true;
  if (x.form === 'exact' || y.form === 'exact') return false;
  const hx = x.root + sepOf(x);
  const hy = y.root + sepOf(y);
  return hx.startsWith(hy) || hy.startsWith(hx);
}

/**
 * Specificity for tie-breaking ("longest resource"): the literal length without the wildcard,
 * an exact resource ranking above a pattern with the same literal (`object:a` > `object:*`, `k:a` > `k:a/*`).
 */
export function resourceSpecificity(r: string | ParsedResource): number {
  const p = asParsed(r);
  return p.root.length * 2 + (p.form === 'exact' ? 1 : 0);
}
