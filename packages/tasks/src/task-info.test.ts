import { describe, expect, it } from 'vitest';
import {
  ACTIVE_TASK_STATUSES,
  isActive,
  isTerminal,
  TASK_STATUSES,
  taskInfoSchema,
  TERMINAL_TASK_STATUSES,
  type TaskInfo,
} from './task-info.js';

const succeeded: TaskInfo = {
  task_id: 'task_0000000000000001',
  owner_oid: 'obj_0000000000000001',
  creator_pid: 'pid_0000000000000001',
  runner_pid: 'pid_0000000000000002',
  tool: 'tt_echo',
  tool_id: 'test/tt_echo',
  status: 'succeeded',
  result_oid: 'obj_0000000000000002',
  error: null,
  wait: {},
  notification: {
    recipient_pid: 'pid_0000000000000001',
    kind: 'normal',
    channel: 'object-task',
    subject: 'Object task succeeded: tt_echo',
    message_id: 'msg_1',
    status: 'delivered',
    error: null,
  },
  owner_watch: { enabled: false, events: ['updated', 'linked'], kind: 'normal', channel: 'object-task-owner' },
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  started_at: '2026-01-01T00:00:00.000Z',
  completed_at: '2026-01-01T00:00:00.000Z',
};

describe('TaskInfo', () => {
  it("[OT-77] statuses are exactly the seed's eleven names: five active, six terminal", () => {
    expect(ACTIVE_TASK_STATUSES).toEqual(['queued', 'running', 'waiting_human', 'waiting_process', 'waiting_message']);
    expect(TERMINAL_TASK_STATUSES).toEqual([
      'succeeded',
      'failed',
      'cancelled',
      'abandoned',
      'superseded_by_restore',
      'result_unavailable_after_reopen',
    ]);
    for (const s of TASK_STATUSES) expect(taskInfoSchema.safeParse({ ...succeeded, status: s }).success).toBe(true);
    for (const s of ['completed', 'waiting', 'done', 'SUCCEEDED'])
      expect(taskInfoSchema.safeParse({ ...succeeded, status: s }).success).toBe(false);
    expect(TASK_STATUSES.filter(isActive)).toEqual([...ACTIVE_TASK_STATUSES]);
    expect(TASK_STATUSES.filter(isTerminal)).toEqual([...TERMINAL_TASK_STATUSES]);
  });

  it("[OT-77] a succeeded TaskInfo has exactly the spec's keys: no result content, arguments or grant intent", () => {
    expect(taskInfoSchema.parse(succeeded)).toEqual(succeeded);
    expect(taskInfoSchema.safeParse({ ...succeeded, result: { text: 'hi' } }).success).toBe(false);
    expect(taskInfoSchema.safeParse({ ...succeeded, args: {} }).success).toBe(false);
    expect(
      taskInfoSchema.safeParse({ ...succeeded, notification: { ...succeeded.notification, grant_result_to_notify: true } }).success,
    ).toBe(false);
    expect(taskInfoSchema.safeParse({ ...succeeded, notification: { ...succeeded.notification, status: 'sent' } }).success).toBe(false);
  });
});
