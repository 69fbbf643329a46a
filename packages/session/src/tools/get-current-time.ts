import { defineTool, LibosError, z } from '@libos/sdk';
import { readClock, recordClockRead } from './clock-provider.js';

/** The default timezone shown in the schema. */
export const DEFAULT_TIMEZONE = 'UTC';

/** Formatters by timezone: building an Intl.DateTimeFormat costs more than the rest of a call, so each zone builds one. */
const FORMATTERS = new Map<string, Intl.DateTimeFormat>();
/** Distinct zones kept; past this the oldest is dropped (names are bounded to 64 chars by the schema). */
const MAX_FORMATTERS = 64;

/** The formatter of `timeZone`; throws a RangeError for a zone that is not IANA (nothing is cached then). */
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = FORMATTERS.get(timeZone);
  if (!f) {
    const opts = {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    } as const;
    f = new Intl.DateTimeFormat('en-US', opts);
    if (FORMATTERS.size >= MAX_FORMATTERS) FORMATTERS.delete(FORMATTERS.keys().next().value!);
    FORMATTERS.set(timeZone, f);
  }
  return f;
}

/** Formats `date` as ISO 8601 with the explicit offset of `timeZone` (UTC is `+00:00`, never `Z`), e.g. `2026-11-30T20:48:00+08:00`. */
export function isoInZone(date: Date, timeZone: string): string {
  // UTC, the default zone of every call, needs no Intl formatter (years 0..9999: ISO's own 4-digit form).
  const year = date.getUTCFullYear();
  if (timeZone === 'UTC' && year >= 0 && year <= 9999) return `${date.toISOString().slice(0, 19)}+00:00`;
  const parts = Object.fromEntries(
    formatterFor(timeZone)
      .formatToParts(date)
      .map((p) => [p.type, p.value]),
  );
  // Date.UTC reads years 0..99 as 1900..1999: set the year apart.
  const wall = new Date(Date.UTC(2000, +parts.month! - 1, +parts.day!, +parts.hour!, +parts.minute!, +parts.second!)).setUTCFullYear(
    +parts.year!,
  );
  const offsetMin = Math.round((wall - Math.floor(date.getTime() / 1000) * 1000) / 60_000);
  const sign = offsetMin >= 0 ? '+' : '-';
  const abs = Math.abs(offsetMin);
  const offset = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return `${parts.year!.padStart(4, '0')}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}

function assertTimezone(tz: string): void {
  try {
    formatterFor(tz);
  } catch (err) {
    throw new LibosError('invalid_timezone', `timezone: unknown timezone: ${tz} (use an IANA name such as UTC or Asia/Shanghai)`, {
      details: { timezone: tz },
      cause: err,
    });
  }
}

/**
 * `get_current_time` whose `timezone` defaults to `defaultTimezone` (shown in the schema the model sees). Wall clock,
 * not a monotonic timer. Needs read on `clock:now`; an unknown zone fails before any authority check. A read is
 * audited (`primitive.clock.now`) and emits `external_read` on `clock:now`; a failing clock is `provider_error` with
 * `details.effect_status: "not_started"`, and the call rolls back (a one-use grant is not spent).
 *
 * @example
 * const tool = getCurrentTimeTool('Asia/Shanghai'); // schema default "Asia/Shanghai"
 */
export function getCurrentTimeTool(defaultTimezone: string = DEFAULT_TIMEZONE) {
  assertTimezone(defaultTimezone);
  return defineTool({
    name: 'get_current_time',
    description:
      'Read the wall-clock time. Optional timezone is an IANA name such as UTC or Asia/Shanghai ' +
      `(default ${defaultTimezone}). Not a monotonic timer.`,
    input: z.object({
      timezone: z.string().min(1).max(64).default(defaultTimezone).describe(`IANA timezone name, default ${defaultTimezone}`),
    }),
    output: z.object({ iso8601: z.string(), unix_seconds: z.number(), timezone: z.string() }),
    async run({ timezone }, ctx) {
      assertTimezone(timezone);
      await ctx.authority.require('clock:now', 'read');
      const now = readClock(ctx, 'now');
      const out = { iso8601: isoInZone(now, timezone), unix_seconds: now.getTime() / 1000, timezone };
      await recordClockRead(ctx, 'clock:now', 'now', out);
      return out;
    },
  });
}

/** `get_current_time` with the host default timezone `UTC`. */
export const getCurrentTime = getCurrentTimeTool();
