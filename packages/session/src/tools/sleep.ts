import { defineTool, LibosError, z } from '@libos/sdk';
import { readClock, recordClockRead } from './clock-provider.js';

/** The longest delay one call may ask for unless the host config says otherwise (the seed's Host default). */
export const MAX_SLEEP_SECONDS = 60;

/**
 * `sleep` whose `seconds` may be 0..`maxSeconds` (the bound is in the schema the model sees): one known delay, never
 * an event wait. Authority (read on `clock:sleep`) is checked and a finite use spent when timing begins, in the
 * transaction that parks the process in a timer wait; the scheduler wakes it only when the clock reaches the
 * deadline (other processes run meanwhile), and the resumed call reports the requested and the measured seconds.
 * A delay of 0 returns at once. A completed sleep is audited (`primitive.clock.sleep`) and emits `external_read` on
 * `clock:sleep`. Everything before the timer commits (the start reading included) rolls back on failure: the error
 * says `details.effect_status: "not_started"` and no use is spent; once the timer is committed the use stays spent
 * (a kill mid-sleep does not return it) and a failing end reading says `"unknown"`.
 *
 * @example
 * const tool = sleepTool(5); // 6 seconds is invalid_arguments
 */
export function sleepTool(maxSeconds: number = MAX_SLEEP_SECONDS) {
  if (!Number.isFinite(maxSeconds) || maxSeconds <= 0) {
    throw new TypeError(`sleepTool: maxSeconds must be a positive finite number (got ${maxSeconds})`);
  }
  return defineTool({
    name: 'sleep',
    description:
      `Wait one known delay of 0..${maxSeconds} seconds. Never use it to poll for an event: wait_child_process, ` +
      'receive_process_messages(block=true) and wait_object_task wait for events. Returns requested and measured ' +
      'elapsed seconds, which need not match; re-read the time afterwards.',
    input: z.object({ seconds: z.number().min(0).max(maxSeconds).describe(`0..${maxSeconds}`) }),
    output: z.object({ requested_seconds: z.number(), elapsed_seconds: z.number() }),
    exclusive: true,
    async run({ seconds }, ctx) {
      if (ctx.resumed) {
        const w = ctx.resumedWait;
        if (w?.kind !== 'timer') throw new LibosError('internal_error', 'sleep resumed without its timer');
        const elapsed = Math.max(0, (readClock(ctx, 'sleep.end').getTime() - Date.parse(w.started_at)) / 1000);
        const out = { requested_seconds: seconds, elapsed_seconds: elapsed };
        await recordClockRead(ctx, 'clock:sleep', 'sleep', out);
        return out;
      }
      if (!Number.isFinite(seconds)) throw new LibosError('invalid_arguments', `seconds: must be finite, 0..${maxSeconds}`);
      await ctx.authority.require('clock:sleep', 'read');
      if (seconds === 0) {
        const out = { requested_seconds: 0, elapsed_seconds: 0 };
        await recordClockRead(ctx, 'clock:sleep', 'sleep', out);
        return out;
      }
      const start = readClock(ctx, 'sleep.start');
      const deadline = new Date(start.getTime() + seconds * 1000).toISOString();
      return ctx.wait({ kind: 'timer', started_at: start.toISOString(), deadline });
    },
  });
}

/** `sleep` with the host default maximum of 60 seconds. */
export const sleep = sleepTool();
