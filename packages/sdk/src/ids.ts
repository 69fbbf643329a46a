import { randomBytes } from 'node:crypto';

/** Ids a run hands out under one random prefix before it draws the next (the counter's 24 bits). */
const IDS_PER_PREFIX = 0x1000000;

let runPrefix = '';
let counter = IDS_PER_PREFIX;

/** The next id body: 10 hex of a random prefix drawn for this run, then a 6-hex counter; a new prefix every 16M ids. */
function nextHex16(): string {
  if (counter >= IDS_PER_PREFIX) {
    runPrefix = randomBytes(5).toString('hex');
    counter = 0;
  }
  return runPrefix + (counter++).toString(16).padStart(6, '0');
}

/**
 * A fresh id: `<prefix>_<16 lowercase hex>`, 40 random bits drawn once per run (and again every 16,777,216 ids) and a
 * 24-bit counter. Ids made by one run share their first 10 hex and increase, so a store's unique indexes on them grow
 * in place (one page per many rows) instead of writing a random page per row; two runs collide only if they draw the
 * same 40 bits (about one pair in a trillion). Ids name things; they are never secrets and never authority.
 *
 * @example
 * const pid = newId('pid'); // 'pid_3f9a0c1b2d000000', then 'pid_3f9a0c1b2d000001' ...
 */
export function newId(prefix: string): string {
  if (!/^[a-z][a-z0-9]*$/.test(prefix)) throw new TypeError(`id prefix must match ^[a-z][a-z0-9]*$ (got ${prefix})`);
  return `${prefix}_${nextHex16()}`;
}

/** The body of every id: 16 lowercase hex (a RegExp source, to compose into larger patterns). */
export const ID_BODY_SOURCE = '[0-9a-f]{16}';
const ID_BODY = new RegExp(`^${ID_BODY_SOURCE}$`);

/**
 * True when `id` has the shape `<prefix>_<16 hex>`.
 *
 * @example
 * isId('obj_0000000000000001', 'obj'); // true
 * isId('obj_1', 'obj');                // false
 */
export function isId(id: unknown, prefix: string): id is string {
  return (
    typeof id === 'string' && id.length === prefix.length + 17 && id.startsWith(`${prefix}_`) && ID_BODY.test(id.slice(prefix.length + 1))
  );
}

/**
 * The anchored pattern of one kind of id, for schemas: `^<prefix>_<16 hex>$`.
 *
 * @example
 * const schema = z.object({ result_oid: z.string().regex(idPattern('obj')) });
 */
export function idPattern(prefix: string): RegExp {
  if (!/^[a-z][a-z0-9]*$/.test(prefix)) throw new TypeError(`id prefix must match ^[a-z][a-z0-9]*$ (got ${prefix})`);
  return new RegExp(`^${prefix}_${ID_BODY_SOURCE}$`);
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
