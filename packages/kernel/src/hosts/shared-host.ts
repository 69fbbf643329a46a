import { hostname } from 'node:os';
import { LibosError, resources, type RuntimeInstance } from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import type { KernelStore } from '../store/kernel-database.js';
import type { SharedStoreSession } from '../store/opened-store.js';
import type { EventFeed } from '../store/postgres/event-feed.js';
import {
  claimRound,
  heartbeat,
  holdTree,
  leaveHosts,
  liveHostOf,
  lockTree,
  ownedRunnable,
  registerHost,
} from '../store/postgres/tree-leases.js';
import { recoverIn } from '../store/recover-on-open.js';
import { inTransaction } from '../store/transaction.js';

/** Options of a runtime that is one of many hosts on a PostgreSQL store (`openRuntime({ host })`). */
export interface HostOptions {
  /** This host's name in the roster (`libos_hosts`) and in lease rows; default `<hostname>-<os pid>-<random>`. */
  readonly id?: string;
  /** How long a tree lease lasts unrenewed, in ms (default 15,000; 1,000 to 600,000); renewed every third of it. */
  readonly leaseMs?: number;
  /** Trees a host claims at most per scheduling round (default 8; 1 to 1,000): hosts share new work as they claim. */
  readonly claimBatch?: number;
}

export const DEFAULT_LEASE_MS = 15_000;
export const DEFAULT_CLAIM_BATCH = 8;
/** How often a host reads the events other hosts committed (its own commits trigger a read at once). */
export const FEED_POLL_MS = 200;

/** The scheduler's view of which processes this host may run (absent: all of them, as one host on its store). */
export interface TreeOwnership {
  /**
   * One scheduling round's reads: claims trees with work and no live lease (recovering each one another host held),
   * then says which processes of the trees this host holds are runnable (oldest first) and when the store's earliest
   * timer is due (null: no process sleeps).
   */
  round(): Promise<HostRound>;
  /**
   * Locks the tree of `pid` for the rest of the unit of work `db` is in (its root's row, `FOR UPDATE`): one writer per
   * tree at a time across hosts, so a call from another host waits for a quantum's unit instead of conflicting.
   */
  lock(db: KernelStore, pid: string): Promise<void>;
  /**
   * `lock`, for a unit of a quantum this host runs: true while this host still holds the tree's lease, false once
   * another host took the tree over (K-15.25: the quantum then writes nothing more).
   */
  hold(db: KernelStore, pid: string): Promise<boolean>;
}

/** What `TreeOwnership.round` read. */
export interface HostRound {
  readonly runnable: readonly { pid: string }[];
  readonly earliestTimer: string | null;
}

const bounded = (field: string, v: number | undefined, def: number, min: number, max: number): number => {
  if (v === undefined) return def;
  if (!Number.isInteger(v) || v < min || v > max)
    throw new LibosError('invalid_arguments', `host.${field}: must be an integer from ${min} to ${max} (got ${String(v)})`, {
      details: { field: `host.${field}`, min, max },
    });
  return v;
};

/** The host options with defaults filled in; out of bounds is `invalid_arguments` naming the field. */
export function resolveHostOptions(o: HostOptions): Required<HostOptions> {
  const id = o.id ?? `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  if (typeof id !== 'string' || !/^[A-Za-z0-9._:-]{1,128}$/.test(id))
    throw new LibosError('invalid_arguments', 'host.id: must be 1 to 128 characters of letters, digits and ._:-', {
      details: { field: 'host.id' },
    });
  return {
    id,
    leaseMs: bounded('leaseMs', o.leaseMs, DEFAULT_LEASE_MS, 1_000, 600_000),
    claimBatch: bounded('claimBatch', o.claimBatch, DEFAULT_CLAIM_BATCH, 1, 1_000),
  };
}

/**
 * One runtime host among many on a shared PostgreSQL store (issue 15): it runs only the process trees it holds a
 * lease on (`libos_tree_leases`), claims trees with work whose lease is free or expired before each scheduling round
 * (recovering a taken-over tree as a reopen would: its `running` processes paused, its `resuming` actions failed
 * closed), and renews its leases on its own session every third of the lease period. A host that dies stops
 * renewing; another takes its trees over once the lease ran out. Calls from any host go through the store, whose
 * row locks and compare-and-set transitions keep one writer per process.
 *
 * @example
 * const rt = await openRuntime({ path: 'postgres://postgres@127.0.0.1/test?schema=agents', host: { id: 'host-a' } });
 * await rt.run({ provider }); // runs the trees host-a claims
 */
export class SharedHost implements TreeOwnership {
  readonly #timer: NodeJS.Timeout;
  readonly #feedTimer: NodeJS.Timeout;
  /**
   * The pids whose tree each open unit of work (its transaction handle) holds, taken by `hold` at the unit's start,
   * outside any savepoint: a row lock taken there lasts until the transaction ends, so `lock` of the same pid in the
   * same unit sends nothing. Keyed weakly: an ended transaction's entry goes with it.
   */
  readonly #held = new WeakMap<object, Set<string>>();
  #beating = false;
  #stopped = false;
  #feedFailing = false;

  constructor(
    private readonly deps: () => KernelDeps,
    private readonly shared: SharedStoreSession,
    readonly options: Required<HostOptions>,
    /** Every host's committed events, in order, onto this host's bus (`rt.watch`, SSE). */
    readonly feed: EventFeed,
  ) {
    this.#timer = setInterval(() => void this.beat(), Math.max(100, Math.floor(options.leaseMs / 3)));
    this.#timer.unref();
    this.#feedTimer = setInterval(() => this.readEvents(), FEED_POLL_MS);
    this.#feedTimer.unref();
  }

  /** Reads the events committed since the last read now (a commit of this host calls it). A failure is warned once per streak. */
  readEvents(): void {
    if (this.#stopped) return;
    this.feed.poll().then(
      () => void (this.#feedFailing = false),
      (err: unknown) => {
        if (this.#stopped || this.#feedFailing) return;
        this.#feedFailing = true;
        process.emitWarning(`host ${this.options.id}: reading the event feed failed: ${(err as Error).message}`, {
          type: 'LibosWarning',
          code: 'host_event_feed_failed',
        });
      },
    );
  }

  /** Adds this host to the roster; returns how many other hosts are live (beat within two lease periods). */
  static async join(shared: SharedStoreSession, options: Required<HostOptions>, instanceId: string): Promise<number> {
    return registerHost(shared.session, { hostId: options.id, hostname: hostname(), osPid: process.pid, instanceId }, 2 * options.leaseMs);
  }

  /** `ServiceScope.runtime` of a host: the live host holding another instance's runtime-local state, on the host's session. */
  static instance(shared: SharedStoreSession, options: Required<HostOptions>, instanceId: string): RuntimeInstance {
    return {
      instanceId,
      holder: async (other) => (other === instanceId ? null : liveHostOf(shared.session, other, 2 * options.leaseMs)),
    };
  }

  async round(): Promise<HostRound> {
    const deps = this.deps();
    // One round trip claims and reads (K-15.26, K-15.27); a tree another host held is then recovered in a unit of its
    // own that holds the tree (its lease is this host's now: no other host claims it meanwhile, and a crash before the
    // recovery leaves it to the host that claims the tree next, as the claim's `previous` says).
    const read = await claimRound(deps.db, this.options.id, this.options.leaseMs, this.options.claimBatch);
    let tookOver = false;
    for (const tree of read.claimed) {
      // A tree nobody held, or this host's own (it ran no quantum since), has nothing cut off to recover.
      if (tree.previous === null || tree.previous === this.options.id) continue;
      const previous = tree.previous;
      tookOver = true;
      await inTransaction(deps.db, deps.scopes, 'host', null, async (scope) => {
        if (!(await this.hold(scope.store, tree.root))) return; // lost again already: the next holder recovers it
        const recovered = await recoverIn(deps, scope, tree.root);
        const pids = (await scope.store.selectFrom('processes').select('pid').where('root_pid', '=', tree.root).execute()).map(
          (r) => r.pid,
        );
        for (const p of deps.registry.plugins) await p.hooks?.recoverTree?.(scope, { rootPid: tree.root, pids });
        await scope.audit.record({
          action: 'host.tree_taken_over',
          target: resources.process(tree.root),
          decision: 'claimed',
          details: { root: tree.root, host: this.options.id, previous_host: previous, ...recovered },
        });
      });
    }
    // A recovery changed the statuses in the tree it took over: the runnable set is read again after it (rare).
    return tookOver ? { ...read, runnable: await ownedRunnable(deps.db, this.options.id) } : read;
  }

  lock(db: KernelStore, pid: string): Promise<void> {
    // The quantum's own unit already holds this tree (`hold`): its tool calls lock nothing twice (K-15.26).
    if (this.#held.get(db)?.has(pid)) return Promise.resolve();
    return lockTree(db, pid);
  }

  async hold(db: KernelStore, pid: string): Promise<boolean> {
    const held = await holdTree(db, pid, this.options.id);
    if (held) this.#held.set(db, (this.#held.get(db) ?? new Set<string>()).add(pid));
    return held;
  }

  /** Renews this host's leases now (the timer does it every third of the lease period). A failure is warned, not lost. */
  async beat(): Promise<void> {
    if (this.#beating || this.#stopped) return;
    this.#beating = true;
    try {
      await heartbeat(this.shared.session, this.options.id, this.options.leaseMs);
    } catch (err) {
      if (!this.#stopped)
        process.emitWarning(`host ${this.options.id}: lease renewal failed: ${(err as Error).message}`, {
          type: 'LibosWarning',
          code: 'host_heartbeat_failed',
        });
    } finally {
      this.#beating = false;
    }
  }

  /** Other live hosts (beat within two lease periods). */
  async others(): Promise<number> {
    const { rows } = await this.shared.session.query<{ n: number | string }>(
      `select count(*) as n from libos_hosts where host_id <> $1 and heartbeat_at > now() - ($2 * interval '1 millisecond')`,
      [this.options.id, 2 * this.options.leaseMs],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /** Stops renewing and leaves the leases to run out (a crash, as another host sees it). */
  halt(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    clearInterval(this.#feedTimer);
    return Promise.resolve();
  }

  /** Stops renewing, lets this host's trees go (others claim them at once) and leaves the roster. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    clearInterval(this.#feedTimer);
    await leaveHosts(this.shared.session, this.options.id);
  }
}
