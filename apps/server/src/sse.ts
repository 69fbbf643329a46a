import { Hono } from 'hono';
import { wire, type AuditRecord, type Runtime, type RuntimeEvent } from '@libos/kernel';
import { z } from 'zod';
import { asLibosError } from './internal/errors.js';
import { parseWith, readQuery } from './internal/parse.js';
import { seqParam } from './internal/schemas.js';
import type { ServerContext } from './internal/server-context.js';
import { headSeq } from './internal/store-reads.js';

/** The `reason` of an `event.invalidated` message: the client's cursor cannot be replayed; refetch the snapshot. */
export const SSE_CURSOR_NOT_REPLAYABLE = 'sse_cursor_not_replayable';

/** The SSE event name a durable event is sent under. */
export function sseEventName(type: string): string {
  if (type.startsWith('human_request_')) return 'human_request.updated';
  if (type === 'message_posted') return 'message.posted';
  // A process's message to a human operator (`human_output`): its own name, so an operator console can show it.
  if (type === 'human_output') return 'human_output.appended';
  if (type === 'llm_call') return 'llm_call.appended';
  return 'event.appended';
}

interface Frame {
  readonly event: string;
  readonly data: unknown;
  readonly id?: number;
}

const encoder = new TextEncoder();
const frame = (f: Frame) => `${f.id !== undefined ? `id: ${f.id}\n` : ''}event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`;
const eventFrame = (e: RuntimeEvent): Frame => ({ id: e.seq, event: sseEventName(e.type), data: wire.eventToWire(e) });

type Live = { readonly kind: 'event'; readonly event: RuntimeEvent } | { readonly kind: 'audit'; readonly record: AuditRecord };

export interface EventStreamOptions {
  /** Replay durable events after this seq first; omitted = live events only. */
  readonly cursor: number | undefined;
  readonly heartbeatMs: number;
  readonly replayLimit: number;
  /** Receives an error that no client can be told of (the stream was already closed). */
  readonly onError: (err: unknown) => void;
}

/**
 * An SSE response over the runtime's events. It watches the runtime first (`rt.watch`, buffering), then replays the durable
 * events after `cursor` from the store (`id: <seq>`), then streams live ones, each seq at most once and in order.
 * A cursor ahead of the store, or more than `replayLimit` events behind it, gets one `event.invalidated`
 * (`reason: "sse_cursor_not_replayable"`, `id` = the head, so a reconnect resumes there) and then live events.
 * Audit records stream live as `audit.appended` (no id: they have their own sequence). Heartbeat comments keep the
 * connection open; a disconnect removes the listeners.
 */
export function eventStream(rt: Runtime, opts: EventStreamOptions): Response {
  let closed = false;
  let cleanup = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string) => {
        if (!closed) controller.enqueue(encoder.encode(text));
      };
      let lastSeq = 0;
      let live = false;
      const buffered: Live[] = [];
      const deliver = (item: Live) => {
        if (item.kind === 'audit') return send(frame({ event: 'audit.appended', data: wire.auditToWire(item.record) }));
        if (item.event.seq <= lastSeq) return;
        lastSeq = item.event.seq;
        send(frame(eventFrame(item.event)));
      };
      const onEvent = (event: RuntimeEvent) => (live ? deliver({ kind: 'event', event }) : void buffered.push({ kind: 'event', event }));
      const onAudit = (record: AuditRecord) => (live ? deliver({ kind: 'audit', record }) : void buffered.push({ kind: 'audit', record }));
      const unwatch = rt.watch({ event: onEvent, audit: onAudit });
      const heartbeat = setInterval(() => send(': heartbeat\n\n'), opts.heartbeatMs);
      cleanup = () => {
        clearInterval(heartbeat);
        unwatch();
      };
      // Listening starts before anything is read, so this first comment tells a client that no later event is missed.
      send(': connected\n\n');

      const invalidate = (cursor: number, head: number, why: string) => {
        lastSeq = head;
        send(
          frame({
            id: head,
            event: 'event.invalidated',
            data: {
              reason: SSE_CURSOR_NOT_REPLAYABLE,
              cursor,
              head,
              message: `cursor ${cursor} ${why}; refetch /api/snapshot and continue from head ${head}`,
            },
          }),
        );
      };
      const replay = async () => {
        const head = await headSeq(rt);
        const cursor = opts.cursor;
        if (cursor === undefined) lastSeq = head;
        else if (cursor > head) invalidate(cursor, head, 'is ahead of the store');
        else {
          const rows = await rt.events({ after: cursor, upTo: head, limit: opts.replayLimit + 1 });
          if (rows.length > opts.replayLimit) invalidate(cursor, head, `is more than ${opts.replayLimit} events behind`);
          else {
            lastSeq = cursor;
            for (const e of rows) deliver({ kind: 'event', event: e });
          }
        }
        live = true;
        for (const item of buffered.splice(0)) deliver(item);
      };
      replay().catch((err: unknown) => {
        // The client hears of it while it listens; after a disconnect only the server's error reporter can.
        if (closed) return opts.onError(err);
        send(frame({ event: 'error', data: { error: asLibosError(err).toJSON() } }));
        closed = true;
        cleanup();
        controller.close();
      });
    },
    cancel() {
      closed = true;
      cleanup();
    },
  });
  return new Response(body, {
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  });
}

const StreamQuery = z.strictObject({ cursor: seqParam.optional() });

/**
 * `GET /api/events/stream[?cursor=<seq>]`: the SSE stream (see `eventStream`). Without `cursor`, a reconnecting
 * client's `Last-Event-ID` header is the cursor; without either, only new events are sent.
 */
export function eventStreamRoutes(ctx: ServerContext) {
  return new Hono().get('/events/stream', (c) => {
    const q = readQuery(c, StreamQuery);
    const lastId = c.req.header('last-event-id');
    const cursor = q.cursor ?? (lastId === undefined ? undefined : parseWith(seqParam, lastId.trim(), 'Last-Event-ID'));
    return eventStream(ctx.rt, { cursor, heartbeatMs: ctx.heartbeatMs, replayLimit: ctx.sseReplayLimit, onError: ctx.onError });
  });
}
