import { LibosError, type ToolContext } from '@libos/sdk';

/** The clock resource each reading is authorized against. */
export type ClockResource = 'clock:now' | 'clock:sleep';
/** The observations of the clock: a `now` read, and the start and end readings around a sleep. */
export type ClockOperation = 'now' | 'sleep.start' | 'sleep.end';

/**
 * Whether an effect happened when a clock call failed: `not_started` (nothing was observed and any one-use grant
 * is back: the call's transaction rolled back) or `unknown` (the delay may have passed; its use stays spent).
 */
export type EffectStatus = 'not_started' | 'unknown';

/**
 * Reads the runtime's clock (the host's injectable provider). A clock that throws fails the call with
 * `provider_error` naming the operation and `details.effect_status`: `not_started` before a sleep's timer is committed
 * (and for `now`), `unknown` for the end reading of a sleep whose delay has already run.
 *
 * @example
 * const start = readClock(ctx, 'sleep.start'); // Date
 */
export function readClock(ctx: ToolContext, operation: ClockOperation): Date {
  const effectStatus: EffectStatus = operation === 'sleep.end' ? 'unknown' : 'not_started';
  try {
    const now = ctx.clock.now();
    if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new TypeError(`the clock returned ${String(now)}, not a valid Date`);
    return now;
  } catch (err) {
    const after =
      effectStatus === 'unknown'
        ? 'the delay may have passed and its use is spent; re-read the time before sleeping again'
        : 'nothing was observed and no use was spent';
    const message = `clock: the ${operation} reading failed (${err instanceof Error ? err.message : String(err)}); ${after}`;
    throw new LibosError('provider_error', message, { details: { provider: 'clock', operation, effect_status: effectStatus }, cause: err });
  }
}

/**
 * The success evidence of a clock primitive, in the call's transaction: the audit `primitive.clock.<op>` on the
 * resource and an `external_read` event targeting it (`{adapter: clock, operation, ...result}`).
 */
export async function recordClockRead(
  ctx: ToolContext,
  resource: ClockResource,
  operation: 'now' | 'sleep',
  result: Record<string, unknown>,
): Promise<void> {
  await ctx.audit.record({ action: `primitive.clock.${operation}`, target: resource, decision: 'ok', details: { ...result } });
  await ctx.events.emit('external_read', { pid: ctx.pid, target: resource, adapter: 'clock', operation, ...result });
}
