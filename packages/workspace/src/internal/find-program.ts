import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/**
 * The absolute path of an executable named `name` (no `/`) on `pathVar`, or null. Relative entries of PATH (`.`,
 * the empty entry) are skipped, so a file in the working directory never stands in for a granted program.
 *
 * @example
 * findProgram('git', '/usr/local/bin:/usr/bin'); // '/usr/bin/git'
 */
export function findProgram(name: string, pathVar: string | undefined): string | null {
  for (const dir of (pathVar ?? '').split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/** True for a regular file the host may execute. */
export function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
