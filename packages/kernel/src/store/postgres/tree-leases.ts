import { sql } from 'kysely';
import type { KernelStore } from '../kernel-database.js';

/** A tree a host just claimed, and the host that held it before (null: never claimed). */
export interface ClaimedTree {
  readonly root: string;
  readonly previous: string | null;
}

/** What one scheduling round of a host read and claimed (`claimRound`). */
export interface ClaimRound {
  /** The trees this round claimed, each with the host that held it before. */
  readonly claimed: readonly ClaimedTree[];
  /** The runnable processes of the trees the host holds (those it held and those it just claimed), oldest first. */
  readonly runnable: readonly { pid: string }[];
  /** The earliest deadline of a sleeping process in the whole store (any host's tree), or null. */
  readonly earliestTimer: string | null;
}

/**
 * One scheduling round of `hostId`, in one round trip and one transaction (K-15.26, K-15.27): claims up to `limit`
 * process trees that have work (a runnable or running process) and no live lease, and reads the runnable processes
 * of the trees the host then holds and the store's earliest timer deadline.
 *
 * A tree is claimed when it was never claimed or when the host that held it stopped renewing the lease.
 * `FOR UPDATE SKIP LOCKED`: hosts claiming at once take different trees and never wait on each other. A root with
 * work but no lease row yet (spawned, forked, or written by a single-host runtime) gets an unclaimed row first. Trees
 * a dead host left come before new ones (their work was already under way: the takeover bound is two lease periods
 * however much new work waits). Both statements go in one simple query (its values inlined), which the server runs
 * as one transaction; the second answers for the trees it claims itself (a statement does not see its own update).
 * The caller recovers each tree another host held (`SharedHost.round`) after it, then reads the runnable set again:
 * the lease is this host's by then, so no other host claims the tree meanwhile.
 *
 * @example
 * declare const db: KernelStore;
 * const { claimed, runnable } = await claimRound(db, 'host-a', 15_000, 8); // claimed [{ root: 'pid_…', previous: null }]
 */
export async function claimRound(db: KernelStore, hostId: string, leaseMs: number, limit: number): Promise<ClaimRound> {
  const host = sql.lit(hostId);
  const { rows } = await sql<{ k: number; root: string | null; previous: string | null; pid: string | null; at: string | null }>`
    insert into libos_tree_leases (root_pid, host_id, lease_until, gen)
    select distinct p.root_pid, null, '-infinity'::timestamptz, 0 from processes p
    where p.status in ('runnable', 'running') and p.root_pid is not null
      and not exists (select 1 from libos_tree_leases l where l.root_pid = p.root_pid)
    on conflict (root_pid) do nothing;
    with c as (
      select l.root_pid, l.host_id as previous from libos_tree_leases l
      where l.lease_until < now()
        and exists (select 1 from processes p where p.root_pid = l.root_pid and p.status in ('runnable', 'running'))
      order by l.host_id is null, l.lease_until, l.root_pid
      limit ${sql.lit(limit)}
      for update of l skip locked),
    u as (
      update libos_tree_leases t set host_id = ${host}, lease_until = now() + (${sql.lit(leaseMs)} * interval '1 millisecond'),
        gen = t.gen + 1
      from c where t.root_pid = c.root_pid
      returning t.root_pid as root, c.previous)
    select 0 as k, u.root, u.previous, null::text as pid, null::timestamptz as at from u
    union all
    select 1, null, null, p.pid, p.created_at from processes p
    where p.status = 'runnable' and (p.root_pid in (select u.root from u) or exists (select 1 from libos_tree_leases l
      where l.root_pid = p.root_pid and l.host_id = ${host} and l.lease_until > now()))
    union all
    select 2, null, null, null, (select wait_deadline from processes where wait_kind = 'timer' order by wait_deadline limit 1)
    order by k, at, pid`.execute(db);
  const claimed: ClaimedTree[] = [];
  const runnable: { pid: string }[] = [];
  let earliestTimer: string | null = null;
  for (const r of rows) {
    if (r.k === 0) claimed.push({ root: r.root!, previous: r.previous });
    else if (r.k === 1) runnable.push({ pid: r.pid! });
    else earliestTimer = r.at;
  }
  return { claimed, runnable, earliestTimer };
}

/** The runnable processes of the trees `hostId` holds a live lease on, in scheduling order (oldest first). */
export async function ownedRunnable(db: KernelStore, hostId: string): Promise<{ pid: string }[]> {
  const { rows } = await sql<{ pid: string }>`select p.pid from processes p
    join libos_tree_leases l on l.root_pid = p.root_pid
    where p.status = 'runnable' and l.host_id = ${hostId} and l.lease_until > now()
    order by p.created_at, p.pid`.execute(db);
  return rows;
}

/** What one heartbeat did: leases renewed, finished trees let go. */
export interface Heartbeat {
  readonly renewed: number;
  readonly released: number;
}

/** The statements a heartbeat runs, for a plain `pg` client (the host's session, outside the store's pool). */
export interface SessionQuery {
  query<R = unknown>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

/**
 * One heartbeat of `hostId`: its row's `heartbeat_at`, its leases pushed `leaseMs` past now, and the leases of trees
 * with no live process left deleted (a tree that gets work again is claimed anew). On the host's own session, so a
 * long transaction on the store's connection never delays it.
 */
export async function heartbeat(session: SessionQuery, hostId: string, leaseMs: number): Promise<Heartbeat> {
  await session.query('update libos_hosts set heartbeat_at = now() where host_id = $1', [hostId]);
  const renewed = await session.query(
    `update libos_tree_leases set lease_until = now() + ($2 * interval '1 millisecond') where host_id = $1`,
    [hostId, leaseMs],
  );
  const released = await session.query(
    `delete from libos_tree_leases l where l.host_id = $1 and not exists
      (select 1 from processes p where p.root_pid = l.root_pid and p.status not in ('exited', 'failed', 'killed'))`,
    [hostId],
  );
  return { renewed: renewed.rowCount ?? 0, released: released.rowCount ?? 0 };
}

/** Registers `hostId` (or refreshes its row) and returns how many other hosts beat within `liveMs`. */
export async function registerHost(
  session: SessionQuery,
  host: { readonly hostId: string; readonly hostname: string; readonly osPid: number; readonly instanceId: string },
  liveMs: number,
): Promise<number> {
  await session.query(
    `insert into libos_hosts (host_id, hostname, os_pid, instance_id, started_at, heartbeat_at)
     values ($1, $2, $3, $4, now(), now())
     on conflict (host_id) do update set hostname = excluded.hostname, os_pid = excluded.os_pid,
       instance_id = excluded.instance_id, started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at`,
    [host.hostId, host.hostname, host.osPid, host.instanceId],
  );
  const { rows } = await session.query<{ n: number | string }>(
    `select count(*) as n from libos_hosts where host_id <> $1 and heartbeat_at > now() - ($2 * interval '1 millisecond')`,
    [host.hostId, liveMs],
  );
  return Number(rows[0]?.n ?? 0);
}

/** A closing host lets its trees go at once (others claim them without waiting out the lease) and leaves the roster. */
export async function leaveHosts(session: SessionQuery, hostId: string): Promise<void> {
  await session.query(`update libos_tree_leases set host_id = null, lease_until = '-infinity' where host_id = $1`, [hostId]);
  await session.query('delete from libos_hosts where host_id = $1', [hostId]);
}

/** The host holding a live lease on the tree of `pid`, or null. */
export async function treeHost(db: KernelStore, pid: string): Promise<string | null> {
  const { rows } = await sql<{ host_id: string | null }>`select l.host_id from processes p
    join libos_tree_leases l on l.root_pid = p.root_pid
    where p.pid = ${pid} and l.lease_until > now()`.execute(db);
  return rows[0]?.host_id ?? null;
}

/** The host whose live runtime is `instanceId` (it beat within `liveMs`), or null: that runtime is gone. */
export async function liveHostOf(session: SessionQuery, instanceId: string, liveMs: number): Promise<string | null> {
  const { rows } = await session.query<{ host_id: string }>(
    `select host_id from libos_hosts where instance_id = $1 and heartbeat_at > now() - ($2 * interval '1 millisecond')`,
    [instanceId, liveMs],
  );
  return rows[0]?.host_id ?? null;
}

/** Row-locks the root of `pid`'s tree until the caller's transaction ends (no row: nothing to lock). */
export async function lockTree(db: KernelStore, pid: string): Promise<void> {
  await sql`select 1 from processes where pid = (select root_pid from processes where pid = ${pid}) for update`.execute(db);
}

/**
 * Row-locks the root of `pid`'s tree, as `lockTree` does, and says whether `hostId` still holds the tree's lease: a
 * quantum's units fence on it (K-15.25), so a host that stalled past its lease and lost the tree to another host
 * writes nothing more of it. The lease row is held `FOR KEY SHARE` until the transaction ends: a claim
 * (`FOR UPDATE SKIP LOCKED`) passes the tree over while a unit runs, and a unit waits for a claim under way and then
 * reads its result; the holder's own heartbeat (an update of `lease_until`) is not held up. No lease row: false.
 *
 * @example
 * declare const trx: KernelStore;
 * if (!(await holdTree(trx, 'pid_…', 'host-a'))) throw new Error('tree taken over');
 */
export async function holdTree(db: KernelStore, pid: string, hostId: string): Promise<boolean> {
  const { rows } = await sql<{ host_id: string | null }>`select l.host_id from processes r
    join libos_tree_leases l on l.root_pid = r.pid
    where r.pid = (select root_pid from processes where pid = ${pid})
    for update of r for key share of l`.execute(db);
  return rows[0]?.host_id === hostId;
}
