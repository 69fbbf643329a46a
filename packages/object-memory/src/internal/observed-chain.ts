import { isId, LibosError, preparedQuery, type ServiceScope } from '@libos/sdk';
import type { Provenance } from '../object-record.js';
import type { OmDb } from './schema.js';

/**
 * Links a chain may have before a create writes its observed sources in full again: reading a provenance in full
 * costs at most this many point reads, and a chain's storage is about `1 / CHAIN_MOST` of writing every list whole.
 */
export const CHAIN_MOST = 16;

/**
 * Links one runtime keeps, and the observed ids they hold in all (a link holds its list, shared with the flow that
 * handed it out): past either, the least recently used link goes, and its process's next list is whole.
 */
const LINKS_MOST = 1_024;
const IDS_MOST = 1 << 20;

/** The last Object a process published with observed sources: the list it was planned with, and its chain depth. */
interface Link {
  readonly oid: string;
  /** Every Object it observed (a frozen list is handed out again until its process observes more). */
  readonly list: readonly string[];
  readonly depth: number;
}

/** How a create writes its observed sources: the ones no earlier Object carries, and that Object (if any). */
export interface ChainedSources {
  readonly fresh: readonly string[];
  readonly parentsFrom?: string;
  /** Records the new Object as the process's last link; call it once the create has committed. */
  readonly remember: () => void;
}

/**
 * Observed sources written once per process rather than once per Object (issue 9; OM-77.3). A process observes ever
 * more Objects and publishes a result every turn, and each result's provenance names everything observed: written
 * whole, a process that read N Objects stored N entries per result, so its store grew with N² and every read of
 * such a row walked its overflow pages. A result instead names what its process observed since its previous
 * result, and that result (`provenance.parents_from`), whose own parents, in full, are its parents too.
 *
 * A link is kept per runtime instance and pid, in memory, and only once its create committed; an Object is chained
 * to it only when it observed everything the link did (so a chain never claims a source its Object did not see), at
 * most `CHAIN_MOST` deep. Forgetting a link (reopen, another host, eviction) only means the next list is whole.
 *
 * @example
 * const chains = new ObservedChains();
 * const first = chains.plan('rt1', 'pid_a', 'obj_1', ['obj_x']);   // fresh ['obj_x'], no parentsFrom
 * first.remember();
 * chains.plan('rt1', 'pid_a', 'obj_2', ['obj_x', 'obj_y']);       // fresh ['obj_y'], parentsFrom 'obj_1'
 */
export class ObservedChains {
  readonly #links = new Map<string, Link>();
  readonly #linksMost: number;
  readonly #idsMost: number;
  #ids = 0;

  constructor({ linksMost = LINKS_MOST, idsMost = IDS_MOST }: { linksMost?: number; idsMost?: number } = {}) {
    this.#linksMost = linksMost;
    this.#idsMost = idsMost;
  }

  /** How the Object `oid` of `pid`, created in runtime `instance`, writes `observed` (unique Object ids). */
  plan(instance: string, pid: string, oid: string, observed: readonly string[]): ChainedSources {
    const key = `${instance} ${pid}`;
    const last = this.#links.get(key);
    const fresh = last !== undefined && last.depth < CHAIN_MOST ? freshSince(last.list, observed) : undefined;
    const depth = fresh === undefined ? 0 : last!.depth + 1;
    const remember = () => this.#keep(key, { oid, list: observed, depth });
    return fresh === undefined ? { fresh: observed, remember } : { fresh, parentsFrom: last!.oid, remember };
  }

  #keep(key: string, link: Link): void {
    const old = this.#links.get(key);
    if (old !== undefined) {
      this.#links.delete(key);
      this.#ids -= old.list.length;
    }
    this.#links.set(key, link);
    this.#ids += link.list.length;
    while (this.#links.size > this.#linksMost || (this.#ids > this.#idsMost && this.#links.size > 1)) {
      const [oldest, gone] = this.#links.entries().next().value!;
      this.#links.delete(oldest);
      this.#ids -= gone.list.length;
    }
  }
}

/**
 * What `now` observed beyond `before`, or undefined when `now` lacks something `before` has (its Object may not
 * claim `before`'s sources). The same list again (nothing observed since) costs nothing; a changed one, a set of each.
 */
function freshSince(before: readonly string[], now: readonly string[]): readonly string[] | undefined {
  if (before === now) return [];
  if (before.length > now.length) return undefined;
  const seen = new Set(now);
  for (const o of before) if (!seen.has(o)) return undefined;
  const had = new Set(before);
  return now.filter((o) => !had.has(o));
}

/** The Object ids of each frozen source list a create was given (a flow's list, the same until it grows). */
const OBJECTS_OF = new WeakMap<readonly string[], readonly string[]>();

/**
 * The Object ids of `sourceOids` that `parents` does not already name, unique, in order (a flow's sources may name
 * messages and other things too). Nothing is looked up; an entry that is not a string is `invalid_arguments`.
 *
 * @example
 * observedObjects(['obj_0000000000000001', 'msg_0000000000000002'], []); // ['obj_0000000000000001']
 */
export function observedObjects(sourceOids: readonly string[] | undefined, parents: readonly string[]): readonly string[] {
  if (sourceOids === undefined || sourceOids.length === 0) return [];
  if (!Array.isArray(sourceOids)) {
    throw new LibosError('invalid_arguments', 'sourceOids: must be an array of ids', { details: { field: 'sourceOids' } });
  }
  // A flow hands out the same frozen list until its process observes something new: filter it once.
  const keep = parents.length === 0 && Object.isFrozen(sourceOids);
  const kept = keep ? OBJECTS_OF.get(sourceOids) : undefined;
  if (kept !== undefined) return kept;
  const named = new Set(parents);
  const out: string[] = [];
  for (const [i, oid] of sourceOids.entries()) {
    if (typeof oid !== 'string') {
      throw new LibosError('invalid_arguments', `sourceOids[${i}]: must be a string id`, { details: { field: 'sourceOids' } });
    }
    if (isId(oid, 'obj') && !named.has(oid)) {
      named.add(oid);
      out.push(oid);
    }
  }
  if (keep) OBJECTS_OF.set(sourceOids, Object.freeze(out));
  return out;
}

/** What a create stores of where its Object came from: its checked parents and what its flow observed. */
export interface ObservedParents {
  /** How many Objects the flow observed in all (the audit's `observed_sources`). */
  readonly count: number;
  /**
   * The Object's provenance: `parent_oids` the checked parents, then the observed Objects no earlier link carries;
   * `parents_from` the process's previous Object when the create chains to it.
   */
  provenance(action: string, operationIds: readonly string[]): Provenance;
  /** Call once the Object is stored: it becomes the process's last link when its transaction commits. */
  readonly stored: () => void;
}

/**
 * The parents a create of `oid` for `pid` stores (OM-77.2, OM-77.3): `parents` (checked by the caller) and the
 * Objects among `sourceOids` (never checked), chained to the process's previous Object when `chains` has one for
 * this runtime instance. Only an immutable Object without named parents becomes a link: a later Object may then
 * claim all its parents as its own observed ones.
 *
 * @example
 * declare const scope: ServiceScope, chains: ObservedChains, sources: readonly string[]; // sources: flow.sources()
 * const o = observedParents(scope, chains, { pid: 'pid_a', oid: 'obj_new', parents: [], sourceOids: sources, immutable: true });
 * const provenance = o.provenance('host.create_for_process', []); // then, once the Object is stored: o.stored();
 */
export function observedParents(
  scope: ServiceScope,
  chains: ObservedChains | undefined,
  input: {
    readonly pid: string;
    readonly oid: string;
    readonly parents: readonly string[];
    readonly sourceOids: readonly string[] | undefined;
    readonly immutable: boolean;
  },
): ObservedParents {
  const observed = observedObjects(input.sourceOids, input.parents);
  const instance = scope.runtime?.instanceId;
  const chain = observed.length > 0 && chains && instance ? chains.plan(instance, input.pid, input.oid, observed) : undefined;
  const fresh = chain?.fresh ?? observed;
  const link = chain !== undefined && input.parents.length === 0 && input.immutable;
  const parentOids = fresh.length === 0 ? input.parents : [...input.parents, ...fresh];
  const from = chain?.parentsFrom !== undefined ? { parents_from: chain.parentsFrom } : {};
  return {
    count: observed.length,
    provenance: (action, operationIds) => ({
      created_from_action: action,
      parent_oids: parentOids,
      source_refs: [],
      source_operation_ids: operationIds,
      ...from,
    }),
    stored: () => {
      if (link) scope.afterCommit(chain.remember);
    },
  };
}

const PROVENANCE_OF = preparedQuery(1, (db: OmDb, [oid]) => db.selectFrom('om_objects').select('provenance').where('oid', '=', oid!));

/**
 * A provenance with its parents in full: its own `parent_oids`, then those of the Objects its `parents_from` chain
 * names (at most `CHAIN_MOST` point reads), unique, without `parents_from`. `known` keeps the full parents of the
 * chain's Objects for later calls (a fork expands many Objects of one chain). A chain that names an Object the
 * store lacks is `store_corrupt`: Object rows are never deleted.
 *
 * @example
 * declare const db: OmDb, stored: Provenance; // an Object's provenance as stored
 * const p = await fullProvenance(db, stored); // p.parent_oids: everything the Object was derived from
 */
export async function fullProvenance(db: OmDb, provenance: Provenance, known = new Map<string, readonly string[]>()): Promise<Provenance> {
  if (provenance.parents_from === undefined) return provenance;
  const { parents_from: _from, ...rest } = provenance;
  return { ...rest, parent_oids: [...new Set([...provenance.parent_oids, ...(await parentsOf(db, provenance.parents_from, known))])] };
}

async function parentsOf(db: OmDb, oid: string, known: Map<string, readonly string[]>): Promise<readonly string[]> {
  const chain: { oid: string; own: readonly string[] }[] = [];
  let next: string | undefined = oid;
  let tail: readonly string[] = [];
  while (next !== undefined) {
    const kept = known.get(next);
    if (kept !== undefined) {
      tail = kept;
      break;
    }
    if (chain.length > CHAIN_MOST || chain.some((c) => c.oid === next)) {
      throw new LibosError('store_corrupt', `provenance of ${oid}: its parents_from chain does not end within ${CHAIN_MOST} links`);
    }
    const row = (await db.executeQuery(PROVENANCE_OF(db, [next]))).rows[0];
    if (row === undefined) throw new LibosError('store_corrupt', `provenance of ${oid}: parents_from names ${next}, which has no row`);
    const p = JSON.parse(row.provenance) as Provenance;
    chain.push({ oid: next, own: p.parent_oids });
    next = p.parents_from;
  }
  for (let i = chain.length - 1; i >= 0; i--) {
    tail = [...new Set([...chain[i]!.own, ...tail])];
    known.set(chain[i]!.oid, tail);
  }
  return tail;
}
