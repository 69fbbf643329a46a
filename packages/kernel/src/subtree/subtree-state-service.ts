import {
  LibosError,
  preparedQuery,
  type ServiceScope,
  type StateItem,
  type StatePart,
  type StateRestoreContext,
  type Subtree,
  type SubtreeCapture,
  type SubtreeStateContributor,
  type SubtreeStateInput,
  type SubtreeStateService,
} from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { getProcess } from '../processes/process-store.js';
import { kernelState } from './kernel-state.js';
import type { KernelStore } from '../store/kernel-database.js';
import { storeOf } from '../store/kernel-scope.js';

/**
 * Every contributor of subtree state, in the order a restore or fork runs them: the kernel (processes first: the
 * others hang off them), the authority engine, then each loaded plugin's in load order.
 */
export function subtreeContributors(deps: () => KernelDeps): readonly SubtreeStateContributor[] {
  const d = deps();
  const list: SubtreeStateContributor[] = [kernelState(deps), d.engine.subtreeState];
  for (const p of d.registry.plugins) if (p.subtreeState) list.push(p.subtreeState);
  const seen = new Set<string>();
  for (const c of list) {
    if (seen.has(c.key)) throw new LibosError('plugin_invalid', `subtree state: two contributors share the key ${JSON.stringify(c.key)}`);
    seen.add(c.key);
  }
  return list;
}

/** The children of the processes `pids`, oldest first. */
const childrenOf = (db: KernelStore, pids: readonly string[]) =>
  db.selectFrom('processes').select(['pid']).where('parent_pid', 'in', pids).orderBy('created_at').orderBy('pid');
/** The same for one process, compiled once per store (most subtrees are one process, or a chain). */
const CHILDREN_OF_ONE = preparedQuery(1, (db: KernelStore, [pid]) => childrenOf(db, [pid!]));

/** `rootPid` and every descendant (any status), oldest first. */
export async function subtreeOf(db: KernelStore, rootPid: string): Promise<Subtree> {
  await getProcess(db, rootPid);
  const pids = [rootPid];
  let frontier = [rootPid];
  while (frontier.length > 0) {
    const rows =
      frontier.length === 1 ? (await db.executeQuery(CHILDREN_OF_ONE(db, frontier))).rows : await childrenOf(db, frontier).execute();
    frontier = rows.map((r) => r.pid).filter((p) => !pids.includes(p));
    pids.push(...frontier);
  }
  return { rootPid, pids };
}

/** The id-prefix of `<prefix>_<hex>`. */
const prefixOf = (id: string): string => {
  const at = id.indexOf('_');
  if (at <= 0) throw new LibosError('internal_error', `fork: ${JSON.stringify(id)} is not a <prefix>_<hex> id`);
  return id.slice(0, at);
};

/**
 * The `subtree_state` service: capture, describe, restore and fork of one process subtree across every contributor,
 * in the caller's transaction (so a capture is one consistent snapshot, and a restore or fork all or nothing).
 */
export function subtreeStateService(deps: () => KernelDeps, scope: ServiceScope): SubtreeStateService {
  const db = storeOf(scope);
  const contributors = () => subtreeContributors(deps);

  function contextFor(input: SubtreeStateInput, key: string, facts: Record<string, Record<string, unknown>>): StateRestoreContext {
    return {
      checkpointId: input.checkpointId,
      capturedAt: input.capturedAt,
      blobs: input.blobs[key] ?? new Map(),
      report(f) {
        facts[key] = { ...(facts[key] ?? {}), ...f };
      },
    };
  }

  /** The parts of `input` paired with their contributors; a part no loaded contributor owns refuses the operation. */
  function pairs(input: SubtreeStateInput, op: string): { c: SubtreeStateContributor; part: StatePart }[] {
    const list = contributors();
    const known = new Set(list.map((c) => c.key));
    const orphan = Object.keys(input.parts).filter((k) => !known.has(k));
    if (orphan.length > 0) {
      throw new LibosError(
        'invalid_state',
        `${op}: checkpoint ${input.checkpointId} holds state of ${orphan.join(', ')}, which no loaded plugin restores; load it first`,
        {
          details: { parts: orphan },
        },
      );
    }
    return list.filter((c) => input.parts[c.key] !== undefined).map((c) => ({ c, part: input.parts[c.key]! }));
  }

  return {
    subtree: (rootPid) => subtreeOf(db, rootPid),

    async capture(subtree): Promise<SubtreeCapture> {
      const capturedAt = scope.clock.now().toISOString();
      const parts: Record<string, StatePart> = {};
      for (const c of contributors()) parts[c.key] = await c.capture(scope, subtree);
      return { subtree, capturedAt, parts };
    },

    describe(parts): readonly StateItem[] {
      const out: StateItem[] = [];
      for (const c of contributors()) if (parts[c.key] !== undefined) out.push(...c.describe(parts[c.key]!));
      return out;
    },

    async restore(input) {
      const list = pairs(input, 'restore');
      // The scope: every pid captured, and every pid the subtree has now (born since: they end).
      const now = await subtreeOf(db, input.subtree.rootPid);
      const pids = [...input.subtree.pids, ...now.pids.filter((p) => !input.subtree.pids.includes(p))];
      const subtree: Subtree = { rootPid: input.subtree.rootPid, pids };
      const facts: Record<string, Record<string, unknown>> = {};
      for (const { c, part } of list) await c.checkRestore?.(scope, subtree, part, contextFor(input, c.key, facts));
      for (const { c, part } of list) await c.restore(scope, subtree, part, contextFor(input, c.key, facts));
      return { facts };
    },

    async fork(input) {
      const list = pairs(input, 'fork');
      const ids = new Map<string, string>();
      const rename = (old: string): string => {
        let id = ids.get(old);
        if (id === undefined) {
          id = deps().ids.next(prefixOf(old));
          ids.set(old, id);
        }
        return id;
      };
      const rootPid = rename(input.subtree.rootPid);
      const facts: Record<string, Record<string, unknown>> = {};
      for (const { c, part } of list) {
        if (!c.fork) continue;
        await c.fork(scope, input.subtree, part, { ...contextFor(input, c.key, facts), rootPid, rename, renamed: (old) => ids.get(old) });
      }
      return { facts, rootPid, ids: Object.fromEntries(ids) };
    },
  };
}
