import { LibosError } from '@libos/sdk';
import { DEFAULT_WATCH_CHANNEL, MAX_CHANNEL_CHARS, WATCH_EVENTS, type NotifyKind, type OwnerWatch, type WatchEvent } from '../task-info.js';

/** A channel name, trimmed, 1..128 characters; `invalid_arguments` naming the field otherwise. */
export function normalizeChannel(raw: string, field: string): string {
  const channel = raw.trim();
  if (channel.length === 0 || channel.length > MAX_CHANNEL_CHARS) {
    throw new LibosError(
      'invalid_arguments',
      `${field}: a channel must be 1..${MAX_CHANNEL_CHARS} characters after trimming (got ${channel.length})`,
      { details: { field, fields: [field] } },
    );
  }
  return channel;
}

/** Watch events lower-cased and deduplicated, in first-seen order; each must be `updated` or `linked`. */
export function normalizeWatchEvents(raw: readonly string[], field = 'watch_events'): WatchEvent[] {
  const out: WatchEvent[] = [];
  raw.forEach((e, i) => {
    const v = e.trim().toLowerCase();
    if (!(WATCH_EVENTS as readonly string[]).includes(v)) {
      throw new LibosError(
        'invalid_arguments',
        `${field}[${i}]: ${JSON.stringify(e)} is not a watch event (use ${WATCH_EVENTS.join(' or ')})`,
        { details: { field, fields: [`${field}.${i}`] } },
      );
    }
    if (!out.includes(v as WatchEvent)) out.push(v as WatchEvent);
  });
  return out;
}

/**
 * The owner watch a start asks for: enabled when `owner_watch`, non-empty events, or a channel is given;
 * defaults events [updated, linked], channel `object-task-owner`, kind normal.
 */
export function watchAtStart(a: {
  owner_watch: boolean;
  watch_events: readonly string[];
  watch_channel?: string | undefined;
  watch_kind: NotifyKind;
}): OwnerWatch {
  const events = normalizeWatchEvents(a.watch_events);
  const channel = a.watch_channel === undefined ? DEFAULT_WATCH_CHANNEL : normalizeChannel(a.watch_channel, 'watch_channel');
  return {
    enabled: a.owner_watch || events.length > 0 || a.watch_channel !== undefined,
    events: events.length ? events : [...WATCH_EVENTS],
    kind: a.watch_kind,
    channel,
  };
}

/**
 * A watch change (`watch_object_task_owner`): empty events, an omitted channel or kind keep the current
 * values; everything given is validated as at start.
 */
export function watchChange(
  current: OwnerWatch,
  a: { enabled: boolean; watch_events: readonly string[]; watch_channel?: string | undefined; watch_kind?: NotifyKind | undefined },
): OwnerWatch {
  const events = normalizeWatchEvents(a.watch_events);
  return {
    enabled: a.enabled,
    events: events.length ? events : current.events,
    kind: a.watch_kind ?? current.kind,
    channel: a.watch_channel === undefined ? current.channel : normalizeChannel(a.watch_channel, 'watch_channel'),
  };
}
