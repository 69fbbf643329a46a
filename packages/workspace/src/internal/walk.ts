import { lstatSync, readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import picomatch from 'picomatch';
import type { ToolContext } from '@libos/sdk';
import { fsError } from './errors.js';
import { fsResource } from './fs-access.js';
import { isUtf8 } from './path-text.js';

export type EntryType = 'file' | 'directory' | 'symlink' | 'other';

/** One entry met by a walk: its path relative to the root (with `/`), its absolute path and its type. */
export interface WalkEntry {
  readonly rel: string;
  readonly abs: string;
  readonly type: EntryType;
}

export interface WalkOptions {
  readonly recursive: boolean;
  readonly includeHidden: boolean;
  readonly maxDepth: number;
  /** Entries looked at before the walk stops (`scanLimitReached`). */
  readonly maxScanned: number;
}

/** What a walk saw besides its entries: names that are not UTF-8, directories it was not allowed to read. */
export interface WalkReport {
  readonly nonUtf8: { readonly parent: string; readonly name_hex: string }[];
  nonUtf8Count: number;
  readonly deniedDirectories: string[];
  scanLimitReached: boolean;
  scanned: number;
}

const typeOf = (d: Dirent<Buffer>): EntryType =>
  d.isSymbolicLink() ? 'symlink' : d.isDirectory() ? 'directory' : d.isFile() ? 'file' : 'other';

/** Non-UTF-8 names kept in a report (the count goes on). */
const MAX_REPORTED_NAMES = 20;

/**
 * Walks `root` (an absolute real directory the caller may read), in name order, never following a symbolic link, so
 * nothing outside `root` is reached. A subdirectory is entered only when the caller may read it (`check`, nothing
 * spent): one denied below an allowed root is reported, not read. Names that are not UTF-8 are reported (hex), never
 * returned as mangled text. `visit` returns false to stop.
 */
export async function walk(
  ctx: ToolContext,
  root: string,
  opts: WalkOptions,
  visit: (e: WalkEntry) => boolean | Promise<boolean>,
): Promise<WalkReport> {
  const report: WalkReport = { nonUtf8: [], nonUtf8Count: 0, deniedDirectories: [], scanLimitReached: false, scanned: 0 };
  const visitDir = async (abs: string, rel: string, depth: number): Promise<boolean> => {
    let dirents: Dirent<Buffer>[];
    try {
      dirents = readdirSync(abs, { withFileTypes: true, encoding: 'buffer' });
    } catch (err) {
      throw fsError(err, abs, 'path');
    }
    dirents.sort((a, b) => Buffer.compare(a.name, b.name));
    for (const d of dirents) {
      if (report.scanned >= opts.maxScanned) {
        report.scanLimitReached = true;
        return false;
      }
      report.scanned++;
      if (!isUtf8(d.name)) {
        report.nonUtf8Count++;
        if (report.nonUtf8.length < MAX_REPORTED_NAMES) report.nonUtf8.push({ parent: abs, name_hex: d.name.toString('hex') });
        continue;
      }
      const name = d.name.toString('utf8');
      if (!opts.includeHidden && name.startsWith('.')) continue;
      const entry: WalkEntry = { rel: rel === '' ? name : `${rel}/${name}`, abs: join(abs, name), type: typeOf(d) };
      if (!(await visit(entry))) return false;
      if (entry.type === 'directory' && opts.recursive && depth < opts.maxDepth) {
        const decision = await ctx.authority.check(fsResource(entry.abs), 'read');
        if (!decision.allowed) {
          report.deniedDirectories.push(entry.abs);
          continue;
        }
        if (!(await visitDir(entry.abs, entry.rel, depth + 1))) return false;
      }
    }
    return true;
  };
  await visitDir(root, '', 1);
  return report;
}

/** A glob matcher on relative paths (picomatch; `dot` follows includeHidden), or null for no glob. */
export function globMatcher(glob: string | undefined, includeHidden: boolean): ((rel: string) => boolean) | null {
  if (glob === undefined) return null;
  return picomatch(glob, { dot: includeHidden });
}

/** Size of a file entry (null when it vanished meanwhile). */
export function sizeOf(abs: string): number | null {
  try {
    return lstatSync(abs).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw fsError(err, abs, 'path');
  }
}
