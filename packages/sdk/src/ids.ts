import { randomFillSync } from 'node:crypto';

/** Random bytes drawn from the CSPRNG in one call and handed out 8 at a time (one call per id costs ~30× more). */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/** The next 8 unused random bytes of the pool, as 16 lowercase hex; refills the pool when it runs out. */
function randomHex16(): string {
  if (poolOffset + 8 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const hex = pool.toString('hex', poolOffset, poolOffset + 8);
  poolOffset += 8;
  return hex;
}

/**
 * Ids are `<prefix>_<16 lowercase hex>`, 64 random bits each (bytes of the CSPRNG, never reused).
 *
 * @example
 * const pid = newId('pid'); // 'pid_3f9a0c1b2d4e5f60'
 */
export function newId(prefix: string): string {
  if (!/^[a-z][a-z0-9]*$/.test(prefix)) throw new TypeError(`id prefix must match ^[a-z][a-z0-9]*$ (got ${prefix})`);
  return `${prefix}_${randomHex16()}`;
}

/** True when `id` has the shape `<prefix>_<16 hex>`. */
export function isId(id: unknown, prefix: string): id is string {
  return typeof id === 'string' && id.length === prefix.length + 17 && id.startsWith(`${prefix}_`) && /^[0-9a-f]{16}$/.test(id.slice(prefix.length + 1));
}

/** A source of ids; inject a deterministic one in tests. */
export interface IdSource {
  next(prefix: string): string;
}

export const randomIds: IdSource = { next: newId };

/**
 * Deterministic ids for tests, demos and scripted runs: `<prefix>_` + a zero-padded hex counter shared by all
 * prefixes (`pid_0000000000000001`, `call_0000000000000002`, ...).
 */
export function sequentialIds(start = 0): IdSource {
  let n = start;
  return { next: (prefix) => `${prefix}_${(++n).toString(16).padStart(16, '0')}` };
}
