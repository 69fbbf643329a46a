import { describe, expect, it } from 'vitest';
import type { ProcessStatus } from './process-record.js';
import { assertStateShape, type Outcome, type WaitState } from './process-state.js';

const ok = (status: ProcessStatus, wait: unknown, outcome: unknown) => () =>
  assertStateShape(status, wait as WaitState | null, outcome as Outcome | null);

describe('assertStateShape (the one write boundary)', () => {
  it('[K-15] accepts every well-formed status, wait and outcome', () => {
    for (const s of ['created', 'runnable', 'running', 'suspended'] as const) expect(ok(s, null, null)).not.toThrow();
    expect(ok('waiting_event', { kind: 'child', child_pid: 'pid_0000000000000001' }, null)).not.toThrow();
    expect(ok('waiting_event', { kind: 'message', filters: {} }, null)).not.toThrow();
    expect(ok('waiting_event', { kind: 'message', filters: { channel: 'c', message_ids: ['msg_1'] } }, null)).not.toThrow();
    expect(ok('waiting_human', { kind: 'human', request_ids: ['hreq_1', 'hreq_2'] }, null)).not.toThrow();
    expect(ok('waiting_tool', { kind: 'tool', operation_id: 'op_1' }, null)).not.toThrow();
    expect(ok('waiting_event', { kind: 'task', task_id: 'task_1' }, null)).not.toThrow();
    expect(ok('waiting_event', { kind: 'task', task_id: 'task_1', deadline: '2026-01-01T00:00:00.000Z' }, null)).not.toThrow();
    expect(ok('paused', { kind: 'paused' }, null)).not.toThrow();
    expect(ok('paused', { kind: 'paused', reason: 'host' }, null)).not.toThrow();
    expect(ok('exited', null, { kind: 'exited', result_oid: null })).not.toThrow();
    expect(ok('exited', null, { kind: 'exited', result_oid: 'obj_0000000000000001' })).not.toThrow();
    expect(ok('failed', null, { kind: 'failed', code: 'x' })).not.toThrow();
    expect(ok('killed', null, { kind: 'killed', code: 'terminated' })).not.toThrow();
  });

  it('[K-15] rejects a waiting status without its wait, and a terminal status without its outcome', () => {
    expect(ok('waiting_event', null, null)).toThrow(/waiting_event needs a wait of kind child\|message/);
    expect(ok('waiting_human', null, null)).toThrow(/needs a wait of kind human/);
    expect(ok('waiting_tool', null, null)).toThrow(/needs a wait of kind tool/);
    expect(ok('paused', null, null)).toThrow(/needs a wait of kind paused/);
    expect(ok('exited', null, null)).toThrow(/exited needs an outcome of kind exited/);
    expect(ok('failed', null, { kind: 'exited', result_oid: null })).toThrow(/needs an outcome of kind failed/);
    expect(ok('killed', null, null)).toThrow(/needs an outcome of kind killed/);
    try {
      assertStateShape('waiting_event', null, null);
    } catch (err) {
      expect(err).toMatchObject({ code: 'internal_error', details: { status: 'waiting_event', wait: null, outcome: null } });
    }
  });

  it('[K-15] rejects a wait of the wrong kind, a wait on a non-waiting status, and an outcome on a live one', () => {
    expect(ok('waiting_event', { kind: 'human', request_ids: ['hreq_1'] }, null)).toThrow(/kind child\|message\|task\|timer \(got human\)/);
    expect(ok('waiting_event', { kind: 'task', task_id: '' }, null)).toThrow(/needs a task wait with a task_id/);
    expect(ok('waiting_human', { kind: 'child', child_pid: 'pid_1' }, null)).toThrow(/kind human \(got child\)/);
    expect(ok('runnable', { kind: 'child', child_pid: 'pid_1' }, null)).toThrow(/runnable carries no wait/);
    expect(ok('exited', { kind: 'paused' }, { kind: 'exited', result_oid: null })).toThrow(/exited carries no wait/);
    expect(ok('runnable', null, { kind: 'exited', result_oid: null })).toThrow(/runnable carries no outcome/);
    expect(ok('waiting_event', { kind: 'child', child_pid: 'pid_1' }, { kind: 'killed' })).toThrow(/carries no outcome/);
  });

  it('[K-15] rejects a human wait without request ids or with duplicates', () => {
    expect(ok('waiting_human', { kind: 'human', request_ids: [] }, null)).toThrow(/at least one unique human request id/);
    expect(ok('waiting_human', { kind: 'human', request_ids: ['hreq_1', 'hreq_1'] }, null)).toThrow(/at least one unique human request id/);
  });

  it('[K-15] rejects a wait of the right kind but the wrong shape', () => {
    expect(ok('waiting_event', { kind: 'child' }, null)).toThrow(/child_pid/);
    expect(ok('waiting_event', { kind: 'child', child_pid: '' }, null)).toThrow(/child_pid/);
    expect(ok('waiting_event', { kind: 'message' }, null)).toThrow(/filters/);
    expect(ok('waiting_event', { kind: 'message', filters: null }, null)).toThrow(/filters/);
    expect(ok('waiting_event', { kind: 'message', filters: ['c'] }, null)).toThrow(/filters/);
    expect(ok('waiting_human', { kind: 'human', request_ids: 'hreq_1' }, null)).toThrow(/request id/);
    expect(ok('waiting_human', { kind: 'human', request_ids: [7] }, null)).toThrow(/request id/);
    expect(ok('waiting_tool', { kind: 'tool' }, null)).toThrow(/operation_id/);
  });
});
