import { hostname } from 'node:os';
import type pg from 'pg';

/**
 * The `application_name` a lease session carries, so a runtime refused the store can say who holds it:
 * `libos host <id> pid <n> on <machine>` for a host of many, `libos pid <n> on <machine>` for a single-host runtime
 * (PostgreSQL keeps 63 bytes of it).
 *
 * @example
 * leaseSessionName('box-1'); // 'libos host box-1 pid 4242 on build-7'
 */
export function leaseSessionName(hostId?: string): string {
  const who = hostId === undefined ? '' : `host ${hostId} `;
  return `libos ${who}pid ${process.pid} on ${hostname()}`.slice(0, 63);
}

/** A session holding a store's lease: shared (a host of many) or exclusive (a single-host runtime), and its name. */
export interface LeaseHolder {
  readonly shared: boolean;
  readonly name: string;
}

/**
 * The sessions that hold the lease of `schema` (`pg_locks` and `pg_stat_activity` of this database), with the name
 * each set (`leaseSessionName`; another client's own name, or `a session` when it set none). Empty when none can be
 * seen (the lock went meanwhile, or the role may not see other sessions).
 */
export async function leaseHolders(client: pg.Client, schema: string): Promise<LeaseHolder[]> {
  // An advisory lock on two int4 keys shows as classid/objid (oids: the keys as unsigned) with objsubid 2.
  const { rows } = await client.query<{ mode: string; name: string | null }>(
    `select l.mode, a.application_name as name
       from pg_locks l left join pg_stat_activity a on a.pid = l.pid
      where l.locktype = 'advisory' and l.objsubid = 2 and l.granted and l.pid <> pg_backend_pid()
        and l.database = (select oid from pg_database where datname = current_database())
        and l.classid::bigint = (hashtext('libos')::bigint + 4294967296) % 4294967296
        and l.objid::bigint = (hashtext($1)::bigint + 4294967296) % 4294967296
      order by l.pid`,
    [schema],
  );
  return rows.map((r) => ({ shared: r.mode === 'ShareLock', name: r.name?.trim() || 'a session' }));
}

/** The holders named for a message: `libos pid 7 on m, libos host a pid 8 on n` (at most 3, then how many more). */
export function namedHolders(holders: readonly LeaseHolder[]): string {
  const names = holders.slice(0, 3).map((h) => h.name);
  if (holders.length > 3) names.push(`${holders.length - 3} more`);
  return names.join(', ');
}
