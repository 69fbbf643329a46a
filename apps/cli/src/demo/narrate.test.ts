import { describe, expect, it } from 'vitest';
import { describeResult } from './narrate.js';

const role = (pid: unknown) => String(pid);
const waiting = (wait: object) =>
  ({ ok: true as const, call_id: 'call_1', tool: 't', payload: null, wait }) as Parameters<typeof describeResult>[1];

describe('demo narration', () => {
  it('names a wait as the kernel names its stop: a sleep waits as waiting_timer, a task wait as waiting_task', () => {
    expect(describeResult('sleep', waiting({ kind: 'timer', started_at: 'a', deadline: 'b' }), role)).toBe('waits (waiting_timer)');
    expect(describeResult('wait_object_task', waiting({ kind: 'task', task_id: 'task_1' }), role)).toBe('waits (waiting_task)');
    expect(describeResult('ask_human', waiting({ kind: 'human', request_ids: ['hr_1'] }), role)).toBe('waits (waiting_human)');
    expect(describeResult('receive_process_messages', waiting({ kind: 'message', filters: {} }), role)).toBe('waits (waiting_message)');
  });
});
