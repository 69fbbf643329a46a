import type { WaitSpec } from '@libos/sdk';
import { describe, expect, it } from 'vitest';
import type { ToolCallResult } from '../broker/tool-result.js';
import { callStopReason, stopAftermath, waitStopReason, type StopReason } from './stop-reason.js';

const waits: WaitSpec[] = [
  { kind: 'human', request_ids: ['hr_1'] },
  { kind: 'child', child_pid: 'pid_1' },
  { kind: 'message', filters: {} },
  { kind: 'task', task_id: 'task_1' },
  { kind: 'timer', started_at: '2026-01-01T00:00:00.000Z', deadline: '2026-01-01T00:00:05.000Z' },
];

describe('stop reasons', () => {
  it('a wait stops its batch as waiting_<kind>: a sleep (timer) is waiting_timer, not waiting_message', () => {
    expect(waits.map(waitStopReason)).toEqual(['waiting_human', 'waiting_child', 'waiting_message', 'waiting_task', 'waiting_timer']);
  });

  it('a call stops its batch by its failure, its wait or a notice; an ordinary result does not', () => {
    const head = { call_id: 'call_1', tool: 't' };
    const failed = (code: string): ToolCallResult => ({ ok: false, ...head, error: { code, category: 'x', message: 'm' } as never });
    expect(callStopReason(failed('interrupted_by_message'))).toBe('interrupted_by_message');
    expect(callStopReason(failed('resource_limit_exceeded'))).toBe('resource_limit_exceeded');
    expect(callStopReason(failed('permission_denied'))).toBe('tool_failed');
    expect(callStopReason({ ok: true, ...head, payload: null, wait: waits[4]! })).toBe('waiting_timer');
    const notice = {
      kind: 'message_notice',
      phase: 'after_tool_call',
      unread: 1,
      message_ids: ['m'],
      channels: [],
      correlation_ids: [],
      message: 'm',
    } as const;
    expect(callStopReason({ ok: true, ...head, payload: 1, notices: [notice] })).toBe('message_notice');
    expect(callStopReason({ ok: true, ...head, payload: 1 })).toBeNull();
  });

  it('every wait parks the process, process_terminal ends it, every other stop hands it back', () => {
    const all: StopReason[] = [
      'completed',
      'tool_failed',
      'message_notice',
      'interrupted_by_message',
      'resource_limit_exceeded',
      'exclusive',
      'empty_reply',
      'process_terminal',
      ...waits.map(waitStopReason),
    ];
    const by = (a: string) => all.filter((s) => stopAftermath(s) === a).sort();
    expect(by('parked')).toEqual(['waiting_child', 'waiting_human', 'waiting_message', 'waiting_task', 'waiting_timer']);
    expect(by('ended')).toEqual(['process_terminal']);
    expect(by('hand_back')).toEqual([
      'completed',
      'empty_reply',
      'exclusive',
      'interrupted_by_message',
      'message_notice',
      'resource_limit_exceeded',
      'tool_failed',
    ]);
  });
});
