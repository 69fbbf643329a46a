import { canonicalJson, type StateItem } from '@libos/sdk';

import type { KindDiff, StateDiff } from '../state-diff.js';

export type { KindDiff, StateDiff } from '../state-diff.js';

const NAMES: Readonly<Record<string, string>> = {
  process: 'processes',
  object: 'objects',
  grant: 'grants',
  task: 'tasks',
  message: 'messages',
};

/**
 * Compares the items of a checkpoint with the items now, by kind and id: added (now only), removed (then only),
 * changed (a fact differs; only the differing facts are shown). Every kind of `then` or `now` is present, plus
 * processes, objects, grants and tasks even when empty.
 */
export function diffItems(then: readonly StateItem[], now: readonly StateItem[], cap: number): StateDiff {
  const key = (i: StateItem) => `${i.kind}\u0000${i.id}`;
  const before = new Map(then.map((i) => [key(i), i]));
  const after = new Map(now.map((i) => [key(i), i]));
  const out: Record<
    string,
    {
      added: KindDiff['added'][number][];
      removed: KindDiff['removed'][number][];
      changed: KindDiff['changed'][number][];
      counts: { added: number; removed: number; changed: number };
    }
  > = {};
  const bucket = (kind: string) =>
    (out[NAMES[kind] ?? `${kind}s`] ??= { added: [], removed: [], changed: [], counts: { added: 0, removed: 0, changed: 0 } });
  for (const k of ['process', 'object', 'grant', 'task']) bucket(k);
  for (const [k, a] of after) {
    const b = before.get(k);
    const d = bucket(a.kind);
    if (!b) {
      if (d.added.length < cap) d.added.push({ id: a.id, ...a.state });
      d.counts.added++;
      continue;
    }
    const from: Record<string, unknown> = {};
    const to: Record<string, unknown> = {};
    for (const f of new Set([...Object.keys(a.state), ...Object.keys(b.state)])) {
      if (canonicalJson(a.state[f] ?? null) !== canonicalJson(b.state[f] ?? null)) {
        from[f] = b.state[f] ?? null;
        to[f] = a.state[f] ?? null;
      }
    }
    if (Object.keys(to).length === 0) continue;
    if (d.changed.length < cap) d.changed.push({ id: a.id, from, to });
    d.counts.changed++;
  }
  for (const [k, b] of before) {
    if (after.has(k)) continue;
    const d = bucket(b.kind);
    if (d.removed.length < cap) d.removed.push({ id: b.id, ...b.state });
    d.counts.removed++;
  }
  return out;
}
