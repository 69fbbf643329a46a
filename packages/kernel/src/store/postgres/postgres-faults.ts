import { LibosError, type ErrorCode } from '@libos/sdk';

/** SQLSTATEs that are a fault of the store (not of a query) and what each means, as `sqlite/store-faults.ts` has them. */
const FAULTS: Readonly<Record<string, { readonly code: ErrorCode; readonly what: string; readonly fix: string }>> = {
  '53100': {
    code: 'disk_full',
    what: 'cannot grow: the server’s disk is full',
    fix: 'free space and retry; the failed write was not made',
  },
  '25006': { code: 'store_read_only', what: 'is read-only (a read-only transaction or standby)', fix: 'point libOS at a writable primary' },
  '42501': { code: 'store_read_only', what: 'may not be written by this role', fix: 'grant the role rights on the schema and its tables' },
  XX001: { code: 'store_corrupt', what: 'is corrupt (data corrupted)', fix: 'restore it from a backup' },
  XX002: { code: 'store_corrupt', what: 'is corrupt (index corrupted)', fix: 'REINDEX the table or restore it from a backup' },
  // The server ended the transaction so that another could go on (K-15.22): nothing of it was kept, a retry may pass.
  '40P01': {
    code: 'conflict',
    what: 'ended this unit of work to break a deadlock with another transaction',
    fix: 'nothing it wrote was kept; run it again',
  },
  '40001': {
    code: 'conflict',
    what: 'ended this unit of work: it could not be serialized with a concurrent transaction',
    fix: 'nothing it wrote was kept; run it again',
  },
};

/** The SQLSTATE of a `pg` error (`53100`, `28P01`, ...), if it carries one. */
export function sqlState(err: unknown): string | undefined {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * The store fault a PostgreSQL error is, as a LibosError naming the store (`disk_full`, `store_read_only`,
 * `store_corrupt`, `conflict` for a deadlock or serialization failure); `undefined` for any other error (a constraint
 * violation, a bug), which callers keep as it is.
 *
 * @example
 * postgresFault(Object.assign(new Error('could not extend file'), { code: '53100' }), 'postgres://db/libos'); // disk_full
 */
export function postgresFault(err: unknown, location: string): LibosError | undefined {
  const state = sqlState(err);
  const fault = state === undefined ? undefined : FAULTS[state];
  if (!fault) return undefined;
  return new LibosError(fault.code, `store ${location} ${fault.what} (SQLSTATE ${state}: ${(err as Error).message}); ${fault.fix}`, {
    details: { path: location, sqlstate: state },
    cause: err,
  });
}

/** `err` as its store fault when it is one, else unchanged. */
export const asPostgresFault = (err: unknown, location: string): unknown => postgresFault(err, location) ?? err;

const UNREACHABLE = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|timeout|terminated unexpectedly/i;

/**
 * An error met while connecting, as one line naming the cause: no server answering is `store_not_found`, wrong
 * credentials `permission_denied`, a missing database `store_not_found`; a store fault keeps its code.
 */
export function connectError(err: unknown, location: string): LibosError {
  if (err instanceof LibosError) return err;
  const state = sqlState(err);
  const message = (err as Error).message || String(err);
  const fail = (code: ErrorCode, why: string) =>
    new LibosError(code, `store ${location} ${why}`, { details: { path: location, ...(state ? { sqlstate: state } : {}) }, cause: err });
  if (state === '28P01' || state === '28000')
    return fail('permission_denied', `refused the credentials: ${message}; check the user and password`);
  if (state === '3D000') return fail('store_not_found', `names a database the server does not have: ${message}; create it first`);
  const code = (err as { code?: unknown }).code;
  if (state === undefined && (UNREACHABLE.test(String(code ?? '')) || UNREACHABLE.test(message)))
    return fail('store_not_found', `is unreachable: no PostgreSQL server answered (${message})`);
  return postgresFault(err, location) ?? fail('internal_error', `cannot be opened: ${message}`);
}
