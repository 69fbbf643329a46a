import { LibosError } from '@libos/sdk';
import type { Canonical } from './internal/canonical.js';
import type { JsonValue } from './internal/json-value.js';
import { PayloadCell, type AppendPlan, type PayloadStats } from './internal/payload-cell.js';

export type { AppendPlan, PayloadStats } from './internal/payload-cell.js';
export type { Canonical } from './internal/canonical.js';

/**
 * Where Object payloads live: runtime-local memory, never the durable store (whose row holds only a marker).
 * One store belongs to one `objectMemory()` plugin instance. `snapshot`/`restore` let a checkpoint capture
 * and later rehydrate payloads.
 *
 * @example
 * const payloads = createPayloadStore();
 * payloads.set('obj_0123456789abcdef', { entries: [] });
 * const snap = payloads.snapshot();
 * payloads.delete('obj_0123456789abcdef');
 * payloads.restore(snap);
 * payloads.has('obj_0123456789abcdef'); // true
 */
export interface PayloadStore {
  /** The payload of `oid`, or undefined when none is cached (a stored payload may itself be `null`). */
  get(oid: string): unknown;
  set(oid: string, payload: unknown): void;
  delete(oid: string): void;
  has(oid: string): boolean;
  /** SIZE and CANON length of the payload of `oid` (kept current by every append), or undefined when none is cached. */
  stats(oid: string): PayloadStats | undefined;
  /** CANON of the whole payload of `oid` with its bytes and sha256 (computed once per content), or undefined. */
  canonical(oid: string): Canonical | undefined;
  /**
   * Checks an append of `entry` (a JSON copy of SIZE `entrySize`) to the payload of `oid` at `listField`
   * and returns its outcome; `apply()` then appends in O(entry) and returns the undo. Throws when none is cached.
   */
  planAppend(oid: string, listField: string, entry: JsonValue, entrySize: number): AppendPlan;
  /** An independent copy of every cached payload. */
  snapshot(): ReadonlyMap<string, unknown>;
  /** Replaces the cache with a snapshot's contents (copied again, so the snapshot stays reusable). */
  restore(snapshot: ReadonlyMap<string, unknown>): void;
}

/**
 * The in-memory PayloadStore. Payloads are JSON values; they are kept deep-frozen, so a reference handed out
 * can never change what is stored, and an append never changes a reference handed out before it.
 */
export function createPayloadStore(): PayloadStore {
  const cells = new Map<string, PayloadCell>();
  const cell = (oid: string): PayloadCell => {
    const c = cells.get(oid);
    if (c === undefined) throw new LibosError('internal_error', `payload store: no payload is cached for ${oid}`, { details: { oid } });
    return c;
  };
  return {
    get: (oid) => cells.get(oid)?.value(),
    set: (oid, payload) => void cells.set(oid, new PayloadCell(payload as JsonValue)),
    delete: (oid) => void cells.delete(oid),
    has: (oid) => cells.has(oid),
    stats: (oid) => cells.get(oid)?.stats(),
    canonical: (oid) => cells.get(oid)?.canonical(),
    planAppend: (oid, listField, entry, entrySize) => {
      const target = cell(oid);
      const plan = target.planAppend(listField, entry, entrySize);
      return {
        ...plan,
        apply: () => {
          const undo = plan.apply();
          return () => {
            undo();
            cells.set(oid, target);
          };
        },
      };
    },
    snapshot: () => new Map([...cells].map(([oid, c]) => [oid, c.value()])),
    restore: (snapshot) => {
      cells.clear();
      for (const [oid, payload] of snapshot) cells.set(oid, new PayloadCell(payload as JsonValue));
    },
  };
}
