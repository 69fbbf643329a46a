import type { Selectable } from 'kysely';
import {
  LibosError,
  type ServiceScope,
  type StateForkContext,
  type StateItem,
  type StatePart,
  type StateRestoreContext,
  type Subtree,
  type SubtreeStateContributor,
} from '@libos/sdk';
import { newGeneration } from '../context/context-store.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { endProcess } from '../processes/exit.js';
import { TERMINAL_PROCESS_STATUSES, type ProcessRow, type ProcessStatus } from '../processes/process-record.js';
import { assertStateShape, type Outcome, type WaitState } from '../processes/process-state.js';
import { waitColumns } from '../processes/wait-columns.js';
import type {
  HumanRequestsTable,
  KernelStore,
  LlmContextsTable,
  PendingActionsTable,
  ProcessMessagesTable,
  ProcessRunnersTable,
} from '../store/kernel-database.js';
import { flushAppends } from '../store/append-buffer.js';
import { kernelScope, storeOf } from '../store/kernel-scope.js';
import { inChunks } from './rows.js';
import { settleRestoredWaits } from './settle-waits.js';
import { resources } from '@libos/sdk';

/**
 * The kernel's share of checkpoints (key `kernel`): process rows, saved calls, runner records, the mailbox of the
 * subtree's pids, their human requests and LLM context rows, and the high-water of the audit and LLM-call logs (to
 * report what happened outside the store since).
 */
interface KernelPart {
  readonly version: 1;
  readonly processes: readonly ProcessRow[];
  readonly pending: readonly Selectable<PendingActionsTable>[];
  readonly runners: readonly Selectable<ProcessRunnersTable>[];
  readonly messages: readonly Pick<Selectable<ProcessMessagesTable>, 'id' | 'recipient_pid' | 'status' | 'acked_at'>[];
  readonly human: readonly Pick<Selectable<HumanRequestsTable>, 'id' | 'pid' | 'status'>[];
  readonly contexts: readonly Selectable<LlmContextsTable>[];
  readonly auditSeq: number;
  readonly llmSeq: number;
}

const partOf = (part: StatePart): KernelPart => {
  const d = part.data as KernelPart | undefined;
  if (d?.version !== 1 || !Array.isArray(d.processes))
    throw new LibosError('internal_error', 'kernel: the checkpoint part is not a version 1 kernel part');
  return d;
};

const db = (scope: ServiceScope) => storeOf(scope);

async function maxSeq(store: KernelStore, table: 'audit_records' | 'llm_calls'): Promise<number> {
  await flushAppends(store);
  const r = await store
    .selectFrom(table)
    .select((eb) => eb.fn.max('seq').as('m'))
    .executeTakeFirst();
  return Number(r?.m ?? 0);
}

/** A captured row's state, with a quantum in flight normalised: `running` is `runnable` (its turn had not committed). */
function capturedState(p: ProcessRow): { status: ProcessStatus; wait: WaitState | null; outcome: Outcome | null } {
  const status: ProcessStatus = p.status === 'running' ? 'runnable' : p.status;
  return {
    status,
    wait: p.wait_state ? (JSON.parse(p.wait_state) as WaitState) : null,
    outcome: p.outcome ? (JSON.parse(p.outcome) as Outcome) : null,
  };
}

export function kernelState(deps: () => KernelDeps): SubtreeStateContributor {
  return {
    key: 'kernel',

    async capture(scope, subtree: Subtree): Promise<StatePart> {
      const s = db(scope);
      const pids = subtree.pids;
      const processes = await inChunks(pids, (c) => s.selectFrom('processes').selectAll().where('pid', 'in', c).execute());
      const order = new Map(subtree.pids.map((p, i) => [p, i]));
      processes.sort((a, b) => order.get(a.pid)! - order.get(b.pid)!);
      const data: KernelPart = {
        version: 1,
        processes,
        pending: (await inChunks(pids, (c) => s.selectFrom('pending_actions').selectAll().where('pid', 'in', c).execute())).map((r) => ({
          ...r,
          status: 'pending',
        })),
        runners: await inChunks(pids, (c) => s.selectFrom('process_runners').selectAll().where('pid', 'in', c).execute()),
        messages: await inChunks(pids, (c) =>
          s.selectFrom('process_messages').select(['id', 'recipient_pid', 'status', 'acked_at']).where('recipient_pid', 'in', c).execute(),
        ),
        human: await inChunks(pids, (c) => s.selectFrom('human_requests').select(['id', 'pid', 'status']).where('pid', 'in', c).execute()),
        contexts: await inChunks(pids, (c) => s.selectFrom('llm_contexts').selectAll().where('pid', 'in', c).execute()),
        auditSeq: await maxSeq(s, 'audit_records'),
        llmSeq: await maxSeq(s, 'llm_calls'),
      };
      return { data };
    },

    describe(part) {
      const d = partOf(part);
      const items: StateItem[] = d.processes.map((p) => ({
        kind: 'process',
        id: p.pid,
        state: {
          status: capturedState(p).status,
          parent_pid: p.parent_pid,
          image_id: p.image_id,
          goal_oid: p.goal_oid,
          tool_table: JSON.parse(p.tool_table) as unknown,
        },
      }));
      for (const m of d.messages) items.push({ kind: 'message', id: m.id, state: { recipient_pid: m.recipient_pid, status: m.status } });
      return items;
    },

    async checkRestore(scope, subtree) {
      // A safe point: no quantum of the subtree is in flight (its turn would commit over the restored rows).
      const s = db(scope);
      const rows = await inChunks(subtree.pids, (c) => s.selectFrom('processes').select(['pid', 'status']).where('pid', 'in', c).execute());
      const running = rows.filter((r) => r.status === 'running').map((r) => r.pid);
      if (running.length > 0) {
        throw new LibosError(
          'invalid_state',
          `restore: a quantum of ${running.join(', ')} is running; restore at a safe point (when no process of the subtree is running)`,
          {
            details: { running },
          },
        );
      }
    },

    async restore(scope, subtree, part, ctx: StateRestoreContext) {
      const d = partOf(part);
      const s = db(scope);
      const now = scope.clock.now().toISOString();
      const captured = new Map(d.processes.map((p) => [p.pid, p]));
      // Processes born after the capture end: the state they belong to is gone.
      const ended: string[] = [];
      for (const pid of subtree.pids) {
        if (captured.has(pid)) continue;
        const r = await s.selectFrom('processes').select('status').where('pid', '=', pid).executeTakeFirst();
        if (!r || TERMINAL_PROCESS_STATUSES.has(r.status)) continue;
        await endProcess(deps(), kernelScope(scope), pid, {
          kind: 'killed',
          code: 'superseded_by_restore',
          reason: `checkpoint ${ctx.checkpointId} was restored`,
        });
        ended.push(pid);
      }
      await s
        .deleteFrom('pending_actions')
        .where('pid', 'in', [...subtree.pids])
        .execute();
      for (const p of d.processes) {
        const cur = await s.selectFrom('processes').select(['revision', 'state_generation']).where('pid', '=', p.pid).executeTakeFirst();
        if (!cur) throw new LibosError('internal_error', `restore: process ${p.pid} of the checkpoint is missing from the store`);
        const st = capturedState(p);
        assertStateShape(st.status, st.wait, st.outcome);
        const r = await s
          .updateTable('processes')
          .set({
            status: st.status,
            wait_state: st.wait ? JSON.stringify(st.wait) : null,
            ...waitColumns(st.wait as Readonly<Record<string, unknown>> | null),
            outcome: st.outcome ? JSON.stringify(st.outcome) : null,
            state_generation: Number(cur.state_generation) + 1,
            revision: Number(cur.revision) + 1,
            goal: p.goal,
            goal_oid: p.goal_oid,
            tool_table: p.tool_table,
            loaded_skills: p.loaded_skills,
            working_directory: p.working_directory,
            llm_profile_id: p.llm_profile_id,
            updated_at: now,
          })
          .where('pid', '=', p.pid)
          .where('revision', '=', cur.revision)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) !== 1)
          throw new LibosError('conflict', `process ${p.pid} changed concurrently (revision ${cur.revision}); retry the restore`);
      }
      for (const a of d.pending)
        await s
          .insertInto('pending_actions')
          .values({ ...a, updated_at: now })
          .execute();
      // The mailbox: captured messages get their captured status back; later ones are superseded (never deleted).
      const capturedMessages = new Map(d.messages.map((m) => [m.id, m]));
      const superseded: string[] = [];
      const messages = await inChunks(subtree.pids, (c) =>
        s.selectFrom('process_messages').select(['id', 'status', 'acked_at']).where('recipient_pid', 'in', c).execute(),
      );
      for (const m of messages) {
        const was = capturedMessages.get(m.id);
        if (was) {
          if (was.status !== m.status)
            await s.updateTable('process_messages').set({ status: was.status, acked_at: was.acked_at }).where('id', '=', m.id).execute();
        } else if (m.status !== 'superseded_by_restore') {
          await s.updateTable('process_messages').set({ status: 'superseded_by_restore' }).where('id', '=', m.id).execute();
          superseded.push(m.id);
        }
      }
      // Human requests are history: only a question asked after the capture and still open is withdrawn.
      const asked = new Set(d.human.map((h) => h.id));
      const withdrawn: string[] = [];
      const requests = await inChunks(subtree.pids, (c) =>
        s.selectFrom('human_requests').select(['id', 'status']).where('pid', 'in', c).execute(),
      );
      for (const h of requests) {
        if (asked.has(h.id) || h.status !== 'pending') continue;
        await s
          .updateTable('human_requests')
          .set({
            status: 'cancelled',
            response: JSON.stringify({ reason: `superseded by checkpoint restore ${ctx.checkpointId}` }),
            answered_at: now,
          })
          .where('id', '=', h.id)
          .execute();
        withdrawn.push(h.id);
      }
      // LLM contexts: the captured Object again under a new generation (a fresh provider request); labels never go down.
      const contexts = new Map(d.contexts.map((c) => [c.pid, c]));
      for (const c of await inChunks(subtree.pids, (ch) => s.selectFrom('llm_contexts').select('pid').where('pid', 'in', ch).execute())) {
        const was = contexts.get(c.pid);
        await s
          .updateTable('llm_contexts')
          .set({ generation: newGeneration(), oid: was ? was.oid : null, updated_at: now })
          .where('pid', '=', c.pid)
          .execute();
      }
      const woken = await settleRestoredWaits(
        kernelScope(scope),
        d.processes.map((p) => p.pid),
      );
      const effects = await externalEffects(deps(), s, subtree.pids, d.auditSeq);
      const llmCalls = Number(
        (
          await s
            .selectFrom('llm_calls')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('seq', '>', d.llmSeq)
            .where('pid', 'in', [...subtree.pids])
            .executeTakeFirst()
        )?.n ?? 0,
      );
      for (const p of d.processes)
        await scope.events.emit('process_restored', { pid: p.pid, checkpoint_id: ctx.checkpointId, status: capturedState(p).status });
      await scope.audit.record({
        action: 'process.checkpoint_restore',
        target: resources.process(subtree.rootPid),
        decision: 'restored',
        details: {
          checkpoint_id: ctx.checkpointId,
          restored: d.processes.map((p) => p.pid),
          ended,
          superseded_messages: superseded.length,
          withdrawn_human_requests: withdrawn,
          woken,
        },
      });
      ctx.report({
        restored_pids: d.processes.map((p) => p.pid),
        ended_pids: ended,
        superseded_messages: superseded,
        withdrawn_human_requests: withdrawn,
        woken_pids: woken,
        external_effects: effects,
        llm_calls_since: llmCalls,
      });
    },

    async fork(scope, subtree, part, ctx: StateForkContext) {
      const d = partOf(part);
      const s = db(scope);
      const now = scope.clock.now().toISOString();
      const runners = new Set(d.runners.map((r) => r.pid));
      const root = d.processes.find((p) => p.pid === subtree.rootPid);
      if (!root || TERMINAL_PROCESS_STATUSES.has(root.status)) {
        throw new LibosError(
          'invalid_state',
          `fork: the checkpoint's owner ${subtree.rootPid} had ended when it was captured; there is nothing to run`,
          { details: { pid: subtree.rootPid } },
        );
      }
      // Live processes only (a runner's call and arguments were never durable, so runners do not follow), each under
      // its forked parent: a process whose parent does not follow does not either.
      const forked: string[] = [];
      for (const p of d.processes) {
        const live = !TERMINAL_PROCESS_STATUSES.has(p.status) && !runners.has(p.pid);
        if (!live || (p.pid !== root.pid && !forked.includes(p.parent_pid ?? ''))) continue;
        forked.push(p.pid);
        const pid = ctx.rename(p.pid);
        await s
          .insertInto('processes')
          .values({
            pid,
            parent_pid: p.pid === root.pid ? null : ctx.rename(p.parent_pid!),
            image_id: p.image_id,
            status: 'runnable',
            wait_state: null,
            wait_kind: null,
            wait_deadline: null,
            outcome: null,
            state_generation: 1,
            revision: 0,
            goal: p.goal,
            goal_oid: p.goal_oid ? ctx.rename(p.goal_oid) : null,
            tool_table: p.tool_table,
            loaded_skills: p.loaded_skills,
            working_directory: p.working_directory,
            llm_profile_id: p.llm_profile_id,
            created_at: now,
            updated_at: now,
            root_pid: ctx.rename(root.pid),
          })
          .execute();
        const c = d.contexts.find((x) => x.pid === p.pid);
        if (c) {
          const stored = await s.selectFrom('llm_contexts').select('labels').where('pid', '=', p.pid).executeTakeFirst();
          const labels = stored?.labels ?? c.labels;
          await s
            .insertInto('llm_contexts')
            .values({
              ...c,
              pid,
              generation: newGeneration(),
              oid: typeof c.oid === 'string' ? ctx.rename(c.oid) : null,
              labels,
              created_at: now,
              updated_at: now,
            })
            .execute();
        }
        await scope.events.emit('process_created', {
          pid,
          image: p.image_id,
          parent_pid: p.pid === root.pid ? null : ctx.rename(p.parent_pid!),
          goal_oid: p.goal_oid ? ctx.rename(p.goal_oid) : null,
          forked_from: p.pid,
        });
      }
      const skipped = d.processes.map((p) => p.pid).filter((p) => !forked.includes(p));
      await scope.audit.record({
        action: 'process.fork_checkpoint',
        target: resources.process(ctx.rootPid),
        decision: 'ok',
        details: { checkpoint_id: ctx.checkpointId, pids: Object.fromEntries(forked.map((p) => [p, ctx.rename(p)])), not_forked: skipped },
      });
      ctx.report({ pids: Object.fromEntries(forked.map((p) => [p, ctx.rename(p)])), not_forked_pids: skipped });
    },
  };
}

/**
 * What the subtree did outside the store since the capture, which no restore undoes: each successful call of a tool
 * with side effects (files, commands, the network), from the audit log.
 */
async function externalEffects(deps: KernelDeps, s: KernelStore, pids: readonly string[], auditSeq: number) {
  await flushAppends(s);
  const rows = await s
    .selectFrom('audit_records')
    .select(['actor', 'target', 'call_id', 'ts'])
    .where('seq', '>', auditSeq)
    .where('action', '=', 'tool.call')
    .where('decision', '=', 'ok')
    .where('actor', 'in', [...pids])
    .orderBy('seq')
    .execute();
  const out: { pid: string; tool: string; call_id: string | null; at: string }[] = [];
  for (const r of rows) {
    const tool = String(r.target ?? '').replace(/^tool:/, '');
    if (deps.registry.tools.get(tool)?.tool.policy?.sideEffects === true)
      out.push({ pid: r.actor, tool, call_id: r.call_id ?? null, at: r.ts });
  }
  return out;
}
