import { LibosError } from '@libos/sdk';
import { namespaces } from '@libos/sdk';

/** Hardening bounds (the reference has none): namespace ≤1,024 and name ≤256 code points. */
export const MAX_NAMESPACE_CHARS = 1_024;
export const MAX_NAME_CHARS = 256;

/** The scope a process gets at spawn: `process:<pid>`. */
export const processNamespace = (pid: string): string => namespaces.process(pid);

/** True when an optional text argument counts as omitted (null, absent, or blank after trim). */
export const isOmitted = (value: string | null | undefined): value is null | undefined => value == null || value.trim() === '';

/**
 * Normalizes a namespace: trim, `\` → `/`, strip edge slashes, then every `/`-segment must be non-empty,
 * not `.`/`..` and without edge whitespace. Throws `invalid_namespace` naming `field`.
 *
 * @example
 * normalizeNamespace(' /proj/r/ '); // 'proj/r'
 * normalizeNamespace('proj\\r');    // 'proj/r'
 */
export function normalizeNamespace(raw: string, field = 'namespace'): string {
  const bad = (why: string) => new LibosError('invalid_namespace', `${field}: ${why} (got ${JSON.stringify(raw)})`, { details: { field } });
  const ns = raw.trim().replace(/\\/g, '/').replace(/^\/+/, '').replace(/\/+$/, '');
  if (ns === '') throw bad('must be a non-empty slash-delimited path');
  if ([...ns].length > MAX_NAMESPACE_CHARS) throw bad(`must be at most ${MAX_NAMESPACE_CHARS} characters`);
  for (const segment of ns.split('/')) {
    if (segment === '') throw bad('segments must be non-empty (no "//")');
    if (segment === '.' || segment === '..') throw bad('segments must not be "." or ".."');
    if (segment.trim() !== segment) throw bad(`segment ${JSON.stringify(segment)} must not start or end with whitespace`);
  }
  return ns;
}

/**
 * The path parent of a normalized namespace (text before the last `/`), or null for a top-level one.
 *
 * @example
 * pathParent('proj/r'); // 'proj'
 */
export function pathParent(namespace: string): string | null {
  const i = namespace.lastIndexOf('/');
  return i < 0 ? null : namespace.slice(0, i);
}

/**
 * The namespace a list/create/read/append call targets: blank or omitted means the caller's process scope.
 *
 * @example
 * resolveNamespace(null, 'pid_0123456789abcdef'); // 'process:pid_0123456789abcdef'
 */
export function resolveNamespace(raw: string | null | undefined, pid: string): string {
  return isOmitted(raw) ? processNamespace(pid) : normalizeNamespace(raw);
}

/**
 * Normalizes an object name: trim, non-empty, no `/` or `\`, not `.`/`..`. Throws `invalid_name`.
 *
 * @example
 * normalizeName('  notes  '); // 'notes'
 */
export function normalizeName(raw: string, field = 'name'): string {
  const bad = (why: string) => new LibosError('invalid_name', `${field}: ${why} (got ${JSON.stringify(raw)})`, { details: { field } });
  const name = raw.trim();
  if (name === '') throw bad('must be non-empty after trimming');
  if (name.includes('/') || name.includes('\\')) throw bad('must not contain "/" or "\\"');
  if (name === '.' || name === '..') throw bad('must not be "." or ".."');
  if ([...name].length > MAX_NAME_CHARS) throw bad(`must be at most ${MAX_NAME_CHARS} characters`);
  return name;
}
