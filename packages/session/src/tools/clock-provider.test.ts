import { LibosError, type ToolContext } from '@libos/sdk';
import { describe, expect, it } from 'vitest';
import { readClock } from './clock-provider.js';

/** Only the clock of a tool context is read. */
const ctxWith = (now: () => Date) => ({ clock: { now } }) as unknown as ToolContext;
const broken = ctxWith(() => {
  throw new Error('device gone');
});

describe('readClock', () => {
  it('returns the clock reading', () => {
    expect(
      readClock(
        ctxWith(() => new Date(1000)),
        'now',
      ),
    ).toEqual(new Date(1000));
  });

  it('[S-C24] a failing reading is provider_error: not_started for now and a sleep start, unknown for a sleep end', () => {
    const statusOf = (op: 'now' | 'sleep.start' | 'sleep.end') => {
      try {
        readClock(broken, op);
      } catch (err) {
        expect(err).toBeInstanceOf(LibosError);
        const e = err as LibosError;
        expect(e.code).toBe('provider_error');
        expect(e.message).toContain(`the ${op} reading failed (device gone)`);
        return e.details;
      }
      throw new Error('no error');
    };
    expect(statusOf('now')).toEqual({ provider: 'clock', operation: 'now', effect_status: 'not_started' });
    expect(statusOf('sleep.start')).toEqual({ provider: 'clock', operation: 'sleep.start', effect_status: 'not_started' });
    expect(statusOf('sleep.end')).toEqual({ provider: 'clock', operation: 'sleep.end', effect_status: 'unknown' });
  });

  it('an invalid Date from the clock is a failed reading too', () => {
    expect(() =>
      readClock(
        ctxWith(() => new Date(Number.NaN)),
        'now',
      ),
    ).toThrow(/not a valid Date/);
  });
});
