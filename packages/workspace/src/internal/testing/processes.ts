import { readFileSync } from 'node:fs';

/**
 * True while `pid` is a live process: it exists and is not a zombie (a zombie has ended and only waits to be reaped,
 * which a container's init may never do).
 */
export function isAlive(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

/** Pids printed one per line (e.g. by `echo $!`). */
export const pidsIn = (text: string) =>
  text
    .split('\n')
    .filter((l) => /^\d+$/.test(l.trim()))
    .map(Number);
