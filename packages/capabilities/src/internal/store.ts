import { LibosError, type ServiceScope } from '@libos/sdk';
import type { Kysely } from 'kysely';

/** Table names this package owns. */
export const T = {
  grants: 'cap_grants',
  reservations: 'cap_reservations',
  accounts: 'cap_budget_accounts',
  usageReservations: 'cap_budget_reservations',
  labels: 'cap_process_labels',
  sinkRules: 'cap_sink_rules',
  meta: 'cap_meta',
  manifests: 'cap_manifests',
  permissionRequests: 'cap_permission_requests',
} as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Db = Kysely<any>;

/** The scope's store transaction as a Kysely handle. */
export function dbOf(scope: ServiceScope): Db {
  const s = scope.store as Db | undefined;
  if (!s || typeof (s as { selectFrom?: unknown }).selectFrom !== 'function') {
    throw new LibosError('internal_error', 'capabilities: scope.store must be a Kysely transaction');
  }
  return s;
}

/** Parses a JSON text column; a corrupt value is a store fault, never silently defaulted. */
export function parseJsonColumn<T>(text: unknown, column: string): T {
  if (typeof text !== 'string') throw new LibosError('internal_error', `capabilities: column ${column} is not JSON text`);
  try {
    return JSON.parse(text) as T;
  } catch (cause) {
    throw new LibosError('internal_error', `capabilities: column ${column} holds invalid JSON`, { cause });
  }
}

/** Number of rows an update/delete changed. */
export function changed(result: { numUpdatedRows?: bigint; numDeletedRows?: bigint } | readonly { numUpdatedRows?: bigint }[]): number {
  const r = Array.isArray(result) ? result[0] : result;
  return Number((r as { numUpdatedRows?: bigint; numDeletedRows?: bigint } | undefined)?.numUpdatedRows ?? (r as { numDeletedRows?: bigint } | undefined)?.numDeletedRows ?? 0n);
}
