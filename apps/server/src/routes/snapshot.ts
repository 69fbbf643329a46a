import { Hono } from 'hono';
import { wire, type ProcessInfo } from '@libos/kernel';
import { headSeq } from '../internal/store-reads.js';
import type { ServerContext } from '../internal/server-context.js';

/** How much one snapshot carries at most. */
export interface SnapshotLimits {
  readonly processes: number;
  readonly humanRequests: number;
  readonly events: number;
}

export const DEFAULT_SNAPSHOT_LIMITS: SnapshotLimits = { processes: 200, humanRequests: 100, events: 50 };

const GOAL_PREVIEW = 200;

/** A process as the console's tree lists it: the wire record's identity and state, its goal cut to a preview. */
function summary(p: ProcessInfo) {
  const { pid, parent_pid, image_id, status, wait_state, outcome, created_at, updated_at } = wire.processToWire(p);
  const goal = p.goal.length > GOAL_PREVIEW ? `${p.goal.slice(0, GOAL_PREVIEW - 1)}…` : p.goal;
  return { pid, parent_pid, image_id, status, wait_state, outcome, goal, created_at, updated_at };
}

/** The last `n` items, and whether anything was cut. */
function newest<T>(all: readonly T[], n: number): { items: T[]; cut: { shown: number; total: number } | null } {
  return all.length > n ? { items: all.slice(all.length - n), cut: { shown: n, total: all.length } } : { items: [...all], cut: null };
}

/**
 * `GET /api/snapshot`: one bounded view for a console: the newest processes (summaries), pending human requests,
 * the newest events, and `cursor` (the newest event's seq, to connect `/api/events/stream?cursor=` without a
 * gap). When a list was cut, `_truncated` names it with `{shown, total}`.
 */
export function snapshotRoutes(ctx: ServerContext, limits: SnapshotLimits = DEFAULT_SNAPSHOT_LIMITS) {
  const { rt } = ctx;
  return new Hono().get('/snapshot', async (c) => {
    const cursor = await headSeq(rt);
    const processes = newest(await rt.processes(), limits.processes);
    const pending = newest(await rt.humanRequests({ status: 'pending' }), limits.humanRequests);
    const from = Math.max(0, cursor - limits.events);
    const events = (await rt.events({ after: from, limit: limits.events })).filter((e) => e.seq <= cursor);
    const truncated = {
      ...(processes.cut ? { processes: processes.cut } : {}),
      ...(pending.cut ? { human_requests: pending.cut } : {}),
      ...(from > 0 ? { events: { shown: events.length, total: cursor } } : {}),
    };
    return c.json({
      db: rt.location,
      cursor,
      processes: processes.items.map(summary),
      human_requests: pending.items.map(wire.humanRequestToWire),
      events: events.map(wire.eventToWire),
      ...(Object.keys(truncated).length > 0 ? { _truncated: truncated } : {}),
    });
  });
}
