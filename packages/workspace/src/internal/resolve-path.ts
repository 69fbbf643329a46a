import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { fsError, refuse } from './errors.js';
import { checkPathText } from './path-text.js';

/** Symbolic links followed while resolving one path before it is refused as a loop (Linux's own limit). */
const MAX_LINK_HOPS = 40;

export type PathKind = 'file' | 'directory' | 'symlink' | 'other';

/** A path resolved before any authority check: the text given, the lexical absolute path and the real one. */
export interface ResolvedPath {
  /** The path as the caller wrote it. */
  readonly requested: string;
  /** Absolute, with `.` and `..` applied to the text (no link followed). */
  readonly absolute: string;
  /**
   * Every symbolic link followed (the last component's only when `followFinal`): the path an effect really touches,
   * and the one an `fs:` grant must cover. Components past the deepest existing directory are kept as written.
   */
  readonly real: string;
  /** What `real` is now (null when it does not exist). */
  readonly kind: PathKind | null;
  readonly stats: Stats | null;
}

const kindOf = (s: Stats): PathKind => (s.isSymbolicLink() ? 'symlink' : s.isDirectory() ? 'directory' : s.isFile() ? 'file' : 'other');

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
}

/**
 * Follows every symbolic link in `absolute` component by component (dangling links too, so a link to a missing
 * file resolves to where a write would land); a link's target is read as the operating system reads it (`..` in a
 * target climbs from the target's real directory). Components that do not exist are kept as written; a component
 * under a non-directory stays as written too (the operation then fails with `not_a_directory`).
 */
function realOf(absolute: string, followFinal: boolean, field: string): string {
  let hops = 0;
  let pending = absolute.split(sep).filter(Boolean);
  let cur: string = sep;
  while (pending.length > 0) {
    const part = pending[0]!;
    pending = pending.slice(1);
    if (part === '.') continue;
    if (part === '..') {
      cur = resolve(cur, '..');
      continue;
    }
    const next = join(cur, part);
    let st: Stats | null;
    try {
      st = lstatOrNull(next);
    } catch (err) {
      throw fsError(err, absolute, field);
    }
    if (st === null) return join(next, ...pending);
    if (st.isSymbolicLink() && (pending.length > 0 || followFinal)) {
      if (++hops > MAX_LINK_HOPS)
        throw refuse('invalid_arguments', 'symlink_loop', `${field}: ${absolute} has too many levels of symbolic links`, {
          field,
          path: absolute,
        });
      let target: string;
      try {
        target = readlinkSync(next);
      } catch (err) {
        throw fsError(err, absolute, field);
      }
      // The link's target replaces it, and is itself resolved from the start (it may hold links and `..`).
      pending = [...(isAbsolute(target) ? target : join(cur, target)).split(sep).filter(Boolean), ...pending];
      cur = sep;
      continue;
    }
    if (!st.isDirectory() && pending.length > 0) return join(next, ...pending);
    cur = next;
  }
  return cur;
}

/**
 * Resolves `input` against `base` (the process's working directory): text checked (`checkPathText`), `..` applied,
 * then symbolic links followed. Call it before any authority check, and check the `real` path.
 *
 * @example
 * const p = resolvePath('/srv/app', 'a/../b/x', { followFinal: true, field: 'path' });
 * p.absolute; // '/srv/app/b/x'
 */
export function resolvePath(base: string, input: string, opts: { readonly followFinal: boolean; readonly field: string }): ResolvedPath {
  checkPathText(opts.field, input);
  const absolute = resolve(base, input);
  const real = realOf(absolute, opts.followFinal, opts.field);
  let stats: Stats | null;
  try {
    stats = lstatOrNull(real);
  } catch (err) {
    throw fsError(err, real, opts.field);
  }
  return { requested: input, absolute, real, kind: stats ? kindOf(stats) : null, stats };
}

/** True when `child` is `parent` or inside it (both absolute and normalised). */
export function isInside(parent: string, child: string): boolean {
  if (child === parent) return true;
  const head = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(head);
}

/** True when a component of `p` is `.git` (files the git tools own). */
export function isGitMetadata(p: string): boolean {
  return p.split(sep).includes('.git');
}
