import { z } from 'zod';
import type { HumanRequestStatus } from '@libos/sdk';

/** A query-string integer in `[min, max]` (e.g. `limit=20`). */
export const queryInt = (min: number, max: number) =>
  z.string().regex(/^\d+$/, 'must be a non-negative integer').transform(Number).pipe(z.number().int().min(min).max(max));

/** A query-string flag: `true` or `false`. */
export const queryBool = z.enum(['true', 'false']).transform((v) => v === 'true');

/** An event sequence number as an SSE cursor (`0` = from the start). */
export const seqParam = queryInt(0, Number.MAX_SAFE_INTEGER);

/** A human sender name, as the kernel accepts it. */
export const humanSender = z.string().regex(/^human:[a-z0-9][a-z0-9._-]*$/, 'must be human:<name> (lowercase letters, digits, . _ -)');

/** A human request status, as a filter. */
export const humanStatus = z.enum(['pending', 'approved', 'rejected', 'cancelled'] satisfies HumanRequestStatus[]);
