import {
  LibosError,
  newId,
  SERVICE_NAMES,
  type Right,
  type ServiceScope,
  type StateItem,
  type StatePart,
  type SubtreeStateService,
} from '@libos/sdk';
import { blobDigests, encodeBlobs, loadBlobs, storeBlobs } from './internal/blobs.js';
import type { CheckpointLimits } from './bounds.js';
import { diffItems, type StateDiff } from './internal/diff.js';
import { checkpointsDb, type CheckpointTable } from './internal/store.js';
import { resources } from '@libos/sdk';
import { isId } from '@libos/sdk';

/** Who acts: a pid (its grants decide) or `host` (the CLI's admin actor; no check). */
export type Actor = string;
export const HOST_ACTOR = 'host';

/** A checkpoint as list and create show it. */
export interface CheckpointSummary {
  readonly checkpoint_id: string;
  readonly owner_pid: string;
  readonly created_by: string;
  readonly label: string | null;
  readonly captured_at: string;
  readonly pids: readonly string[];
  readonly counts: Readonly<Record<string, number>>;
  readonly payload_bytes: number;
}

/** What inspect shows: the summary and the items, each kind capped at `ITEMS_SHOWN` (counts are whole). */
export interface CheckpointInspection extends CheckpointSummary {
  readonly items: Readonly<Record<string, readonly (StateItem['state'] & { readonly id: string })[]>>;
  readonly truncated: readonly string[];
}

export interface RestoreResult {
  readonly checkpoint_id: string;
  readonly restore_id: string;
  readonly restored_at: string;
  /** What each part's owner did (restored, released, superseded, revoked, effects not undone...). */
  readonly report: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

export interface ForkResult {
  readonly checkpoint_id: string;
  readonly fork_id: string;
  /** The new subtree's root. */
  readonly root_pid: string;
  readonly pids: Readonly<Record<string, string>>;
  readonly report: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** Items a kind shows at most in inspect and diff (counts stay exact). */
export const ITEMS_SHOWN = 200;

/** The name under which the plugin provides this service. */
export const CHECKPOINTS_SERVICE = 'checkpoints';

/**
 * The checkpoints service (provided as `checkpoints`), bound to one transaction. Every operation takes the actor:
 * a pid is checked against its grants (`checkpoint:process:<pid>` write to create; `checkpoint:<id>` read to list,
 * inspect and diff, execute to fork, admin to restore), `host` is not. The tools call it as their caller; the CLI as
 * `host` unless told to act as a pid.
 *
 * @example
 * const cps = scope.service<CheckpointsService>('checkpoints');
 * const cp = await cps.create('host', pid, { label: 'before the risky change' });
 */
export interface CheckpointsService {
  create(actor: Actor, ownerPid: string, opts?: { readonly label?: string }): Promise<CheckpointSummary>;
  list(actor: Actor, opts?: { readonly ownerPid?: string; readonly limit?: number }): Promise<CheckpointSummary[]>;
  inspect(actor: Actor, checkpointId: string): Promise<CheckpointInspection>;
  diff(
    actor: Actor,
    checkpointId: string,
  ): Promise<{ readonly checkpoint_id: string; readonly captured_at: string; readonly changes: StateDiff }>;
  restore(actor: Actor, checkpointId: string): Promise<RestoreResult>;
  fork(actor: Actor, checkpointId: string): Promise<ForkResult>;
}

const KIND_NAMES: Readonly<Record<string, string>> = {
  process: 'processes',
  object: 'objects',
  grant: 'grants',
  task: 'tasks',
  message: 'messages',
};
const plural = (kind: string) => KIND_NAMES[kind] ?? `${kind}s`;

function summaryOf(row: CheckpointTable): CheckpointSummary {
  return {
    checkpoint_id: row.checkpoint_id,
    owner_pid: row.owner_pid,
    created_by: row.created_by,
    label: row.label,
    captured_at: row.captured_at,
    pids: JSON.parse(row.pids) as string[],
    counts: JSON.parse(row.summary) as Record<string, number>,
    payload_bytes: Number(row.payload_bytes),
  };
}

export function checkpointsService(scope: ServiceScope, limits: CheckpointLimits): CheckpointsService {
  const db = checkpointsDb(scope.store);
  const state = () => scope.service<SubtreeStateService>(SERVICE_NAMES.subtreeState);
  const now = () => scope.clock.now().toISOString();

  async function authorize(actor: Actor, resource: string, right: Right): Promise<void> {
    if (actor === HOST_ACTOR) return;
    await scope
      .authorityFor(actor)
      .require(resource, right, { message: `${actor} may not ${right} ${resource}: it holds no ${right} grant on it` });
  }

  async function load(actor: Actor, checkpointId: string, right: Right): Promise<CheckpointTable> {
    if (typeof checkpointId !== 'string' || !isId(checkpointId, 'ckpt')) {
      throw new LibosError('invalid_arguments', `checkpoint_id: must look like ckpt_<16 hex> (got ${JSON.stringify(checkpointId)})`, {
        details: { field: 'checkpoint_id' },
      });
    }
    const row = await db.selectFrom('checkpoints').selectAll().where('checkpoint_id', '=', checkpointId).executeTakeFirst();
    if (!row)
      throw new LibosError('checkpoint_not_found', `checkpoint_id: no checkpoint ${checkpointId}`, {
        details: { field: 'checkpoint_id', checkpoint_id: checkpointId },
      });
    await authorize(actor, resources.checkpoint(checkpointId), right);
    return row;
  }

  async function parts(checkpointId: string): Promise<Record<string, StatePart>> {
    const rows = await db.selectFrom('checkpoint_parts').select(['part_key', 'data']).where('checkpoint_id', '=', checkpointId).execute();
    return Object.fromEntries(rows.map((r) => [r.part_key, { data: JSON.parse(r.data) as unknown }]));
  }

  async function record(
    checkpointId: string,
    kind: 'restore' | 'fork',
    actor: Actor,
    report: unknown,
  ): Promise<{ id: string; at: string }> {
    const id = newId(kind === 'restore' ? 'restore' : 'fork');
    const at = now();
    await db
      .insertInto('checkpoint_events')
      .values({ event_id: id, checkpoint_id: checkpointId, kind, actor, at, report: JSON.stringify(report) } as never)
      .execute();
    return { id, at };
  }

  function counts(items: readonly StateItem[], payloads: number): Record<string, number> {
    const out: Record<string, number> = { processes: 0, objects: 0, grants: 0, tasks: 0, messages: 0 };
    for (const i of items) out[plural(i.kind)] = (out[plural(i.kind)] ?? 0) + 1;
    out.payloads = payloads;
    return out;
  }

  return {
    async create(actor, ownerPid, opts = {}) {
      if (typeof ownerPid !== 'string' || !isId(ownerPid, 'pid')) {
        throw new LibosError('invalid_arguments', `pid: must look like pid_<16 hex> (got ${JSON.stringify(ownerPid)})`, {
          details: { field: 'pid' },
        });
      }
      await authorize(actor, `checkpoint:process:${ownerPid}`, 'write');
      const st = state();
      const capture = await st.capture(await st.subtree(ownerPid));
      const { blobs, total } = encodeBlobs(capture.parts, limits);
      const checkpointId = newId('ckpt');
      const at = now();
      const items = st.describe(capture.parts);
      const summary = counts(items, blobs.length);
      await db
        .insertInto('checkpoints')
        .values({
          checkpoint_id: checkpointId,
          owner_pid: ownerPid,
          created_by: actor,
          label: opts.label ?? null,
          captured_at: capture.capturedAt,
          pids: JSON.stringify(capture.subtree.pids),
          summary: JSON.stringify(summary),
          payload_bytes: total,
        } as never)
        .execute();
      for (const [key, part] of Object.entries(capture.parts)) {
        await db
          .insertInto('checkpoint_parts')
          .values({ checkpoint_id: checkpointId, part_key: key, data: JSON.stringify(part.data) })
          .execute();
      }
      await storeBlobs(db, checkpointId, blobs, at);
      // The owner reads its checkpoint by owning it (no stored grant); the record says so. Nothing more is granted.
      await scope
        .authorityFor(ownerPid)
        .grantTrusted({ subject: ownerPid, resource: resources.checkpoint(checkpointId), rights: ['read'], ownership: true });
      await scope.events.emit('checkpoint_created', {
        pid: ownerPid,
        checkpoint_id: checkpointId,
        created_by: actor,
        pids: capture.subtree.pids.length,
        payload_bytes: total,
      });
      await scope.audit.record({
        action: 'checkpoint.create',
        target: resources.checkpoint(checkpointId),
        decision: 'ok',
        details: {
          owner_pid: ownerPid,
          actor,
          label: opts.label ?? null,
          pids: capture.subtree.pids,
          counts: summary,
          payload_bytes: total,
          blob_digests: blobs.slice(0, 100).map((b) => b.sha256),
        },
      });
      return {
        checkpoint_id: checkpointId,
        owner_pid: ownerPid,
        created_by: actor,
        label: opts.label ?? null,
        captured_at: capture.capturedAt,
        pids: capture.subtree.pids,
        counts: summary,
        payload_bytes: total,
      };
    },

    async list(actor, opts = {}) {
      const limit = opts.limit ?? 100;
      if (!Number.isInteger(limit) || limit < 0 || limit > 1000)
        throw new LibosError('invalid_arguments', `limit: must be an integer from 0 to 1000 (got ${limit})`, {
          details: { field: 'limit' },
        });
      let sel = db.selectFrom('checkpoints').selectAll();
      if (opts.ownerPid !== undefined) sel = sel.where('owner_pid', '=', opts.ownerPid);
      const out: CheckpointSummary[] = [];
      for (const row of await sel.orderBy('seq', 'desc').execute()) {
        if (out.length >= limit) break;
        // Only what the actor may read; the rest is silently left out (a listing grants nothing).
        if (actor !== HOST_ACTOR && !(await scope.authorityFor(actor).check(resources.checkpoint(row.checkpoint_id), 'read')).allowed)
          continue;
        out.push(summaryOf(row));
      }
      return out;
    },

    async inspect(actor, checkpointId) {
      const row = await load(actor, checkpointId, 'read');
      const digests = await blobDigests(db, checkpointId);
      const grouped: Record<string, (StateItem['state'] & { id: string })[]> = {};
      const truncated: string[] = [];
      for (const item of state().describe(await parts(checkpointId))) {
        const list = (grouped[plural(item.kind)] ??= []);
        if (list.length >= ITEMS_SHOWN) {
          if (!truncated.includes(plural(item.kind))) truncated.push(plural(item.kind));
          continue;
        }
        const blob = digests.get(`${item.kind}:${item.id}`);
        list.push({
          id: item.id,
          ...item.state,
          ...(item.kind === 'object' ? { payload_sha256: blob?.sha256 ?? null, payload_bytes: blob?.bytes ?? null } : {}),
        });
      }
      return { ...summaryOf(row), items: grouped, truncated };
    },

    async diff(actor, checkpointId) {
      const row = await load(actor, checkpointId, 'read');
      const st = state();
      const then = st.describe(await parts(checkpointId));
      const current = await st.capture(await st.subtree(row.owner_pid));
      return {
        checkpoint_id: checkpointId,
        captured_at: row.captured_at,
        changes: diffItems(then, st.describe(current.parts), ITEMS_SHOWN),
      };
    },

    async restore(actor, checkpointId) {
      const row = await load(actor, checkpointId, 'admin');
      const input = {
        checkpointId,
        subtree: { rootPid: row.owner_pid, pids: JSON.parse(row.pids) as string[] },
        capturedAt: row.captured_at,
        parts: await parts(checkpointId),
        blobs: await loadBlobs(db, checkpointId),
      };
      const done = await state().restore(input);
      const { id, at } = await record(checkpointId, 'restore', actor, done.facts);
      await scope.events.emit('checkpoint_restored', { pid: row.owner_pid, checkpoint_id: checkpointId, restore_id: id, actor });
      await scope.audit.record({
        action: 'checkpoint.restore',
        target: resources.checkpoint(checkpointId),
        decision: 'restored',
        details: { restore_id: id, owner_pid: row.owner_pid, actor, report: done.facts },
      });
      return { checkpoint_id: checkpointId, restore_id: id, restored_at: at, report: done.facts };
    },

    async fork(actor, checkpointId) {
      const row = await load(actor, checkpointId, 'execute');
      const input = {
        checkpointId,
        subtree: { rootPid: row.owner_pid, pids: JSON.parse(row.pids) as string[] },
        capturedAt: row.captured_at,
        parts: await parts(checkpointId),
        blobs: await loadBlobs(db, checkpointId),
      };
      const done = await state().fork(input);
      const pids = (done.facts.kernel?.pids ?? {}) as Record<string, string>;
      const { id } = await record(checkpointId, 'fork', actor, { root_pid: done.rootPid, ...done.facts });
      await scope.events.emit('checkpoint_forked', {
        pid: done.rootPid,
        checkpoint_id: checkpointId,
        fork_id: id,
        actor,
        from_pid: row.owner_pid,
      });
      await scope.audit.record({
        action: 'checkpoint.fork',
        target: resources.checkpoint(checkpointId),
        decision: 'forked',
        details: { fork_id: id, owner_pid: row.owner_pid, root_pid: done.rootPid, actor, report: done.facts },
      });
      return { checkpoint_id: checkpointId, fork_id: id, root_pid: done.rootPid, pids, report: done.facts };
    },
  };
}
