import {
  joinLabels,
  LibosError,
  SERVICE_NAMES,
  type EmittedEvent,
  type MailboxService,
  type ObjectsService,
  type ServiceScope,
} from '@libos/sdk';
import { taskLifecycle } from './lifecycle.js';
import type { TasksState } from './state.js';
import { isActive, type TaskInfo, type WatchEvent } from '../task-info.js';
import { listTasks, tasksDb } from './task-store.js';
import { resources } from '@libos/sdk';

/** The change an Object Memory event describes, as an owner watch names it, or null for other events. */
export function ownerChangeOf(e: EmittedEvent): {
  oid: string;
  event: WatchEvent;
  version: number | null;
  change: Record<string, unknown>;
  relation: string | null;
  dstOid: string | null;
  linkId: string | null;
} | null {
  const d = e.data as Record<string, unknown>;
  if (e.type === 'object_appended' && typeof d.oid === 'string') {
    return {
      oid: d.oid,
      event: 'updated',
      version: typeof d.version === 'number' ? d.version : null,
      change: { operation: 'append', list_field: d.list_field ?? null, length: d.length ?? null },
      relation: null,
      dstOid: null,
      linkId: null,
    };
  }
  if (e.type === 'object_linked' && typeof d.oid === 'string' && typeof d.dst_oid === 'string') {
    const str = (v: unknown) => (typeof v === 'string' ? v : null);
    return {
      oid: d.oid,
      event: 'linked',
      version: typeof d.version === 'number' ? d.version : null,
      change: { operation: 'link' },
      relation: str(d.relation),
      dstOid: d.dst_oid,
      linkId: str(d.link_id),
    };
  }
  return null;
}

/**
 * Owner watch fan-out (docs/behaviour/object-tasks.md), inside the transaction that changed the owner: every active task on that owner
 * whose watch selects the event sends its runner a notice (sender `object_task_owner_watch:<id>`, correlation id =
 * task id, the watch's channel and kind). A notice carries identity and change facts only, never owner content, and
 * grants nothing. A notice that cannot be posted leaves an event and an audit record; the change itself stands.
 */
export async function notifyOwnerChange(scope: ServiceScope, state: TasksState, e: EmittedEvent): Promise<void> {
  const change = ownerChangeOf(e);
  if (!change) return;
  const life = taskLifecycle(scope, state);
  const tasks = await listTasks(tasksDb(scope.store), { ownerOid: change.oid, activeOnly: true });
  for (const row of tasks) {
    const t: TaskInfo = await life.reconcile(row);
    if (!isActive(t.status) || !t.runner_pid || !t.owner_watch.enabled || !t.owner_watch.events.includes(change.event)) continue;
    const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
    const owner = await objects.describe(change.oid);
    // The notice names the destination (never its content, never a right on it) and so carries its labels too.
    const dst = change.dstOid ? await objects.describe(change.dstOid) : null;
    const labels = owner && dst ? joinLabels([owner.labels, dst.labels]) : (owner?.labels ?? dst?.labels);
    try {
      const m = await scope.service<MailboxService>(SERVICE_NAMES.mailbox).post({
        recipientPid: t.runner_pid,
        sender: `object_task_owner_watch:${t.task_id}`,
        channel: t.owner_watch.channel,
        kind: 'object_task_owner_change',
        delivery: t.owner_watch.kind,
        subject: `Object owner ${change.event}: ${change.oid}`,
        correlationId: t.task_id,
        payload: {
          type: 'object_task_owner_change',
          task_id: t.task_id,
          owner_oid: change.oid,
          event: change.event,
          event_id: e.id,
          version: change.version,
          change: change.change,
          relation: change.relation,
          dst_oid: change.dstOid,
          link_id: change.linkId,
        },
        ...(labels ? { labels } : {}),
      });
      await scope.events.emit('object_task_owner_change_notified', {
        pid: t.creator_pid,
        task_id: t.task_id,
        runner_pid: t.runner_pid,
        event: change.event,
        message_id: m.message_id,
      });
    } catch (err) {
      const text = err instanceof LibosError ? `${err.code}: ${err.message}` : String(err);
      await scope.events.emit('object_task_owner_change_undelivered', {
        pid: t.creator_pid,
        task_id: t.task_id,
        runner_pid: t.runner_pid,
        event: change.event,
        error: text,
      });
      await scope.audit.record({
        action: 'object_task.owner_watch',
        target: resources.objectTask(t.task_id),
        decision: 'undelivered',
        details: { event: change.event, error: text },
      });
    }
  }
}
