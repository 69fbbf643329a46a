import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { LibosError } from '@libos/sdk';
import { isStoreUrl } from '../served/served-file.js';

/**
 * Commands that work on an existing store's processes. On a `--db` path where no store exists they refuse with
 * `store_not_found` (exit 1) instead of creating an empty store there: a mistyped path is reported, not hidden.
 * `init`, `spawn`, `code`, `serve` and `demo` create a store; `config show`, `plugins` and `skills validate` open none.
 */
const NEEDS_STORE = new Set([
  'ps',
  'show',
  'call',
  'send',
  'grant',
  'revoke',
  'caps',
  'human',
  'audit',
  'events',
  'llm-calls',
  'objects',
  'run',
  'pause',
  'resume',
  'checkpoint',
  'mcp',
  'skills',
]);
const OPENS_NO_STORE = new Set(['skills validate']);

/** The command's path below the program, e.g. `human answer`. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * Throws `store_not_found` naming the path when `cmd` needs an existing store and `db` names none. Nothing is created.
 *
 * @example
 * assertStoreFor(cmd, './.libos/libos.db'); // libos ps on a fresh folder: store_not_found
 */
export function assertStoreFor(cmd: Command, db: string): void {
  const path = commandPath(cmd);
  if (!NEEDS_STORE.has(path.split(' ')[0] ?? '') || OPENS_NO_STORE.has(path) || db === ':memory:' || isStoreUrl(db)) return;
  const file = resolve(db);
  if (existsSync(file)) return;
  throw new LibosError('store_not_found', `--db ${db}: no store at ${file} (libos init creates one; check the path)`, {
    details: { path: file, command: path },
  });
}
