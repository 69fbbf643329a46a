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
  /** An independent copy of every cached payload. */
  snapshot(): ReadonlyMap<string, unknown>;
  /** Replaces the cache with a snapshot's contents (copied again, so the snapshot stays reusable). */
  restore(snapshot: ReadonlyMap<string, unknown>): void;
}

/**
 * The in-memory PayloadStore. Payloads are JSON values; they are kept deep-frozen, so a reference handed out
 * can never change what is stored.
 */
export function createPayloadStore(): PayloadStore {
  const payloads = new Map<string, unknown>();
  return {
    get: (oid) => payloads.get(oid),
    set: (oid, payload) => void payloads.set(oid, deepFreeze(payload)),
    delete: (oid) => void payloads.delete(oid),
    has: (oid) => payloads.has(oid),
    snapshot: () => new Map(payloads),
    restore: (snapshot) => {
      payloads.clear();
      for (const [oid, payload] of snapshot) payloads.set(oid, deepFreeze(payload));
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}
