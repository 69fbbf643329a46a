import { describe, expect, it } from 'vitest';
import { normalizeChannel, normalizeWatchEvents, watchAtStart, watchChange } from './validate.js';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err as { code?: string; details?: { field?: string } };
  }
  return null;
};

describe('channels and watch events', () => {
  it('[OT-6] trims channels to 1..128 characters and names the field otherwise', () => {
    expect(normalizeChannel('  work  ', 'notify_channel')).toBe('work');
    expect(normalizeChannel('c'.repeat(128), 'notify_channel')).toHaveLength(128);
    expect(codeOf(() => normalizeChannel('c'.repeat(129), 'notify_channel'))).toMatchObject({
      code: 'invalid_arguments',
      details: { field: 'notify_channel' },
    });
    expect(codeOf(() => normalizeChannel('   ', 'watch_channel'))).toMatchObject({
      code: 'invalid_arguments',
      details: { field: 'watch_channel' },
    });
  });

  it('[OT-6] lower-cases and deduplicates events; anything but updated/linked is refused', () => {
    expect(normalizeWatchEvents(['Linked', 'UPDATED', 'linked'])).toEqual(['linked', 'updated']);
    expect(normalizeWatchEvents([])).toEqual([]);
    expect(codeOf(() => normalizeWatchEvents(['updated', 'deleted']))).toMatchObject({
      code: 'invalid_arguments',
      details: { field: 'watch_events' },
    });
  });

  it('[OT-13] a start enables the watch for owner_watch, events or a channel, with the defaults filled in', () => {
    expect(watchAtStart({ owner_watch: false, watch_events: [], watch_kind: 'normal' })).toEqual({
      enabled: false,
      events: ['updated', 'linked'],
      kind: 'normal',
      channel: 'object-task-owner',
    });
    expect(watchAtStart({ owner_watch: true, watch_events: [], watch_kind: 'interrupt' })).toEqual({
      enabled: true,
      events: ['updated', 'linked'],
      kind: 'interrupt',
      channel: 'object-task-owner',
    });
    expect(watchAtStart({ owner_watch: false, watch_events: [], watch_channel: 'x', watch_kind: 'normal' })).toMatchObject({
      enabled: true,
      channel: 'x',
    });
    expect(watchAtStart({ owner_watch: false, watch_events: ['updated'], watch_kind: 'normal' })).toMatchObject({
      enabled: true,
      events: ['updated'],
    });
  });

  it('[OT-46] a change keeps the current events, channel and kind when they are empty or omitted', () => {
    const current = { enabled: true, events: ['linked' as const], kind: 'interrupt' as const, channel: 'c' };
    expect(watchChange(current, { enabled: false, watch_events: [] })).toEqual({
      enabled: false,
      events: ['linked'],
      kind: 'interrupt',
      channel: 'c',
    });
    expect(watchChange(current, { enabled: true, watch_events: ['updated'], watch_channel: 'd', watch_kind: 'normal' })).toEqual({
      enabled: true,
      events: ['updated'],
      kind: 'normal',
      channel: 'd',
    });
  });
});
