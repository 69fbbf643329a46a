import {
  canonicalJson,
  joinLabels,
  LibosError,
  SERVICE_NAMES,
  type DataLabels,
  type MailboxService,
  type ObjectsService,
  type ProcessService,
  type RunnerObserver,
  type RunnerOutcome,
  type RunnerRef,
  type ResultsService,
  type RunnerService,
  type ServiceScope,
  type WaitSpec,
} from '@libos/sdk';
import { isTerminalProcessStatus, resources } from '@libos/sdk';
import { resultName } from '../result-names.js';
import type { TasksState } from './state.js';
import { ACTIVE_TASK_STATUSES, isActive, TASK_STATUSES, type TaskInfo, type TaskStatus } from '../task-info.js';
import { findTask, tasksDb, updateTask, type TaskPatch } from './task-store.js';

/** Terminal statuses whose notification is posted (and retried): abandoned, superseded and unavailable never are. */
const NOTIFIED = new Set<string>(['succeeded', 'failed', 'cancelled']);
const PHASE: Partial<Record<TaskStatus, 'completed' | 'failed' | 'cancelled'>> = {
  succeeded: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};
const WAITING = ['waiting_human', 'waiting_process', 'waiting_message'] as const;

/** The task status and `wait` record of a runner wait. */
export function waitStatus(wait: WaitSpec): { status: TaskStatus; wait: Record<string, unknown>; text: string } {
  switch (wait.kind) {
    case 'human':
      return {
        status: 'waiting_human',
        wait: { request_id: wait.request_ids[0] ?? null, request_ids: [...wait.request_ids] },
        text: `waiting for human request ${wait.request_ids.join(', ')}`,
      };
    case 'child':
      return { status: 'waiting_process', wait: { child_pid: wait.child_pid }, text: `waiting for process ${wait.child_pid}` };
    case 'task':
      return { status: 'waiting_process', wait: { task_id: wait.task_id }, text: `waiting for object task ${wait.task_id}` };
    case 'message':
      return {
        status: 'waiting_message',
        wait: { filters: { ...wait.filters } },
        text: `waiting for a message matching ${canonicalJson(wait.filters)}`,
      };
    case 'timer':
      // A sleeping target is still running: the delay is its work, not a dependency anyone can satisfy.
      return { status: 'running', wait: { deadline: wait.deadline }, text: `sleeping until ${wait.deadline}` };
  }
}

/**
 * Task transitions, notifications and result publication, bound to one store transaction. Every terminal write is a
 * compare-and-set on "still active": the first writer wins and later ones get the stored row.
 */
export function taskLifecycle(scope: ServiceScope, state: TasksState) {
  const db = tasksDb(scope.store);
  const now = () => scope.clock.now().toISOString();
  const runners = () => scope.service<RunnerService>(SERVICE_NAMES.runners);
  const processes = () => scope.service<ProcessService>(SERVICE_NAMES.processes);
  const objects = () => scope.service<ObjectsService>(SERVICE_NAMES.objects);

  async function liveProcess(pid: string) {
    try {
      const p = await processes().get(pid);
      return isTerminalProcessStatus(p.status) ? null : p;
    } catch (err) {
      if (err instanceof LibosError && err.code === 'process_not_found') return null;
      throw err;
    }
  }

  async function labelsOf(oids: readonly (string | null)[]): Promise<DataLabels | undefined> {
    const found: DataLabels[] = [];
    for (const oid of oids) {
      if (!oid) continue;
      const d = await objects().describe(oid);
      if (d) found.push(d.labels);
    }
    return found.length ? joinLabels(found) : undefined;
  }

  /**
   * Posts the notification of `phase` to the task's recipient: sender `object_task:<id>`, correlation
   * id = task id. A terminal phase records its outcome on the task (delivered + message id, failed + error, or
   * undelivered_terminal when the recipient has ended) and is posted at most once delivered; a waiting phase is a
   * courtesy notice that changes nothing on the record.
   */
  async function notify(task: TaskInfo, phase: 'waiting' | 'completed' | 'failed' | 'cancelled'): Promise<TaskInfo> {
    const n = task.notification;
    if (!n.recipient_pid) return task;
    const terminal = phase !== 'waiting';
    if (terminal && (n.status === 'delivered' || n.status === 'undelivered_terminal')) return task;
    const subject = `Object task ${task.status}: ${task.tool}`;
    let outcome: { status: 'delivered' | 'failed' | 'undelivered_terminal'; message_id: string | null; error: string | null };
    if (!(await liveProcess(n.recipient_pid))) {
      outcome = { status: 'undelivered_terminal', message_id: null, error: `recipient ${n.recipient_pid} has ended` };
    } else {
      try {
        const m = await scope.service<MailboxService>(SERVICE_NAMES.mailbox).post({
          recipientPid: n.recipient_pid,
          sender: resources.objectTask(task.task_id),
          channel: n.channel,
          kind: 'object_task',
          delivery: n.kind,
          subject,
          body: task.error ?? '',
          correlationId: task.task_id,
          payload: {
            type: 'object_task',
            phase,
            task_id: task.task_id,
            owner_oid: task.owner_oid,
            tool: task.tool,
            status: task.status,
            result_oid: task.result_oid,
            error: task.error,
            wait: task.wait,
          },
          ...(await labelsOf([task.owner_oid, task.result_oid]).then((labels) => (labels ? { labels } : {}))),
        });
        outcome = { status: 'delivered', message_id: m.message_id, error: null };
      } catch (err) {
        const e = err instanceof LibosError ? err : null;
        const ended = !(await liveProcess(n.recipient_pid));
        outcome = {
          status: ended ? 'undelivered_terminal' : 'failed',
          message_id: null,
          error: e ? `${e.code}: ${e.message}` : `${(err as Error)?.name ?? 'Error'}: ${(err as Error)?.message ?? String(err)}`,
        };
      }
    }
    await scope.audit.record({
      action: 'object_task.notify',
      target: resources.objectTask(task.task_id),
      decision: outcome.status,
      details: { phase, recipient_pid: n.recipient_pid, message_id: outcome.message_id, error: outcome.error },
    });
    if (!terminal) return task;
    if (outcome.status !== 'delivered')
      await scope.events.emit('object_task_notification_undelivered', {
        pid: task.creator_pid,
        task_id: task.task_id,
        status: outcome.status,
        error: outcome.error,
      });
    const updated = await updateTask(db, task.task_id, TASK_STATUSES, { notification: { ...n, subject, ...outcome } }, now());
    return updated ?? task;
  }

  /**
   * Moves an active task to a terminal status (compare-and-set): completed_at, the event and audit, waiters woken,
   * the terminal notification posted. Returns the stored row (the winner's, if another writer was first).
   */
  async function finish(task: TaskInfo, status: 'succeeded' | 'failed' | 'cancelled' | 'abandoned', patch: TaskPatch): Promise<TaskInfo> {
    const at = now();
    const done = await updateTask(db, task.task_id, ACTIVE_TASK_STATUSES, { ...patch, status, completed_at: at }, at);
    if (!done) return (await findTask(db, task.task_id)) ?? task;
    const event = status === 'succeeded' ? 'completed' : status;
    await scope.events.emit(`object_task_${event}`, {
      pid: done.creator_pid,
      task_id: done.task_id,
      status,
      runner_pid: done.runner_pid,
      result_oid: done.result_oid,
      error: done.error,
    });
    await scope.audit.record({
      action: `object_task.${event}`,
      target: resources.objectTask(done.task_id),
      decision: status,
      details: { owner_oid: done.owner_oid, runner_pid: done.runner_pid, tool: done.tool, result_oid: done.result_oid, error: done.error },
    });
    await runners().wakeTaskWaiters(done.task_id);
    scope.afterCommit(() => state.live.delete(done.task_id));
    const phase = PHASE[status];
    const notified = phase ? await notify(done, phase) : done;
    // The task no longer pins its owner: a creator that ended meanwhile has its memory merged now (OT-47).
    if (!(await liveProcess(done.creator_pid))) await objects().releaseEnded(done.creator_pid);
    return notified;
  }

  /**
   * The result Object: immutable `tool_result` owned by the task, linked from the owner (`produced`); a live creator gets r+m+link and a
   * root.
   */
  async function publishResult(task: TaskInfo, outcome: Extract<RunnerOutcome, { kind: 'succeeded' }>): Promise<string> {
    // The kernel's one result publisher (the broker's too): a large result is kept as its digest and a preview.
    const ref = await scope.service<ResultsService>(SERVICE_NAMES.results).publish({
      pid: task.creator_pid,
      name: resultName(task.task_id),
      title: `${task.tool} result of object task ${task.task_id}`,
      fields: { task_id: task.task_id, owner_oid: task.owner_oid, tool_name: task.tool, tool_id: task.tool_id, call_id: outcome.callId },
      resultField: 'result',
      result: outcome.payload,
      labels: outcome.labels,
      sourceOids: outcome.sourceOids,
      attachToView: false,
      owner: { kind: 'object_task', id: task.task_id },
    });
    if (await liveProcess(task.creator_pid)) {
      await scope.authorityFor(task.creator_pid).grantTrusted({
        subject: task.creator_pid,
        resource: resources.object(ref.oid),
        rights: ['read', 'materialize', 'link'],
        metadata: { granted_by: '@libos/tasks', task_id: task.task_id },
      });
      await objects().attachRoot(task.creator_pid, ref.oid);
    }
    // owner -produced-> result: what the owner's history says the task made (a watching runner hears `linked`).
    await objects().link(task.owner_oid, ref.oid, 'produced', { task_id: task.task_id, tool: task.tool });
    return ref.oid;
  }

  async function succeeded(task: TaskInfo, runner: RunnerRef, outcome: Extract<RunnerOutcome, { kind: 'succeeded' }>): Promise<void> {
    const resultOid = await publishResult(task, outcome);
    const recipient = task.notification.recipient_pid;
    const wantsGrant = state.live.get(task.task_id)?.grantResultToNotify === true && recipient !== null && recipient !== task.creator_pid;
    const creator = scope.authorityFor(task.creator_pid);
    const grant = wantsGrant ? await creator.check(resources.object(resultOid), 'grant') : null;
    // Throwing here rolls the call back with its result: the task fails instead, and nothing is left behind.
    if (grant && !grant.allowed)
      throw new LibosError(
        'permission_denied',
        `cannot grant object task result ${resultOid} to ${recipient}: ${task.creator_pid} lacks grant on object:${resultOid}`,
      );
    const done = await finish(task, 'succeeded', { result_oid: resultOid, error: null });
    if (grant && done.status === 'succeeded' && done.notification.status === 'delivered') {
      await creator.consume(grant);
      await scope.authorityFor(recipient!).grantTrusted({
        subject: recipient!,
        resource: resources.object(resultOid),
        rights: ['read', 'materialize', 'link'],
        metadata: { granted_by: '@libos/tasks', task_id: task.task_id, from: task.creator_pid },
      });
    }
    await runners().end(runner.pid, { kind: 'exited', resultOid });
  }

  /** The task a runner works for, if it is still active. */
  async function activeTask(runner: RunnerRef): Promise<TaskInfo | null> {
    const t = await findTask(db, runner.operationId);
    return t && isActive(t.status) && t.runner_pid === runner.pid ? t : null;
  }

  /** The observer the kernel calls for this plugin's runners. */
  const observer: RunnerObserver = {
    async started(runner) {
      const t = await activeTask(runner);
      if (!t)
        throw new LibosError(
          'invalid_state',
          `object task ${runner.operationId} is no longer active; its runner ${runner.pid} does not run`,
        );
      if (t.status === 'running') return;
      const at = now();
      const moved = await updateTask(db, t.task_id, ['queued', ...WAITING], { status: 'running', started_at: t.started_at ?? at }, at);
      if (moved) await scope.events.emit('object_task_running', { pid: t.creator_pid, task_id: t.task_id, runner_pid: runner.pid });
    },
    async settled(runner, outcome) {
      const t = await activeTask(runner);
      if (outcome.kind === 'succeeded') {
        if (t) await succeeded(t, runner, outcome);
        else await runners().end(runner.pid, { kind: 'exited', resultOid: null });
        return;
      }
      if (outcome.kind === 'failed') {
        if (t) await finish(t, 'failed', { error: `${outcome.error.code}: ${outcome.error.message}` });
        await runners().end(runner.pid, { kind: 'failed', code: outcome.error.code, message: outcome.error.message });
        return;
      }
      if (!t) return;
      const w = waitStatus(outcome.wait);
      const at = now();
      const moved = await updateTask(
        db,
        t.task_id,
        ACTIVE_TASK_STATUSES,
        { status: w.status, wait: w.wait, error: w.text, started_at: t.started_at ?? at },
        at,
      );
      if (!moved) return;
      await scope.events.emit('object_task_waiting', { pid: t.creator_pid, task_id: t.task_id, status: w.status, wait: w.wait });
      await scope.audit.record({
        action: 'object_task.waiting',
        target: resources.objectTask(t.task_id),
        decision: w.status,
        details: { wait: w.wait },
      });
      await runners().wakeTaskWaiters(t.task_id);
      await notify(moved, 'waiting');
    },
    async ended(runner, status, outcome) {
      const t = await activeTask(runner);
      if (!t) return;
      await endedEarly(t, status, outcome);
    },
  };

  /** A runner ended while its task was active (killed → cancelled; exited/failed → failed). */
  async function endedEarly(t: TaskInfo, status: string, outcome: Readonly<Record<string, unknown>> | null): Promise<TaskInfo> {
    if (status === 'killed')
      return finish(t, 'cancelled', { error: typeof outcome?.reason === 'string' && outcome.reason ? outcome.reason : 'runner killed' });
    const text =
      typeof outcome?.message === 'string' && outcome.message
        ? outcome.message
        : `object task runner ended before task completion: ${status}`;
    return finish(t, 'failed', { error: text });
  }

  /**
   * Housekeeping before a task is shown: an active task whose runner has ended is settled; a
   * waiting task whose runner was woken reads `running`; a terminal notification left `none`/`failed` is retried.
   */
  async function reconcile(t: TaskInfo): Promise<TaskInfo> {
    let task = t;
    if (isActive(task.status) && task.runner_pid) {
      const r = await runners().get(task.runner_pid);
      if (!r || isTerminalProcessStatus(r.status)) task = await endedEarly(task, r?.status ?? 'killed', r?.outcome ?? null);
      else if ((WAITING as readonly string[]).includes(task.status) && (r.status === 'runnable' || r.status === 'running')) {
        task = (await updateTask(db, task.task_id, WAITING, { status: 'running' }, now())) ?? task;
      }
    }
    if (NOTIFIED.has(task.status) && (task.notification.status === 'none' || task.notification.status === 'failed'))
      task = await notify(task, PHASE[task.status]!);
    return task;
  }

  /** Cancels an active task: cancelled with the reason, runner killed, waiters woken, notified. */
  async function cancel(t: TaskInfo, reason: string | undefined): Promise<TaskInfo> {
    const done = await finish(t, 'cancelled', { error: reason ?? 'cancelled' });
    if (done.runner_pid)
      await runners().end(done.runner_pid, { kind: 'killed', code: 'cancelled', reason: reason ?? 'object task cancelled' });
    return done;
  }

  return { observer, reconcile, cancel, finish, notify, liveProcess };
}

export type TaskLifecycle = ReturnType<typeof taskLifecycle>;
