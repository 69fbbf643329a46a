import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { wire, type EventQuery, type RuntimeEvent } from '@libos/kernel';
import { isLibosError } from '@libos/sdk';
import { EXIT, print, table, UsageError } from '../output.js';
import type { CommandKit } from './kit.js';
import { parsePositiveInt } from './parse.js';
import { withRuntime, type GlobalOptions } from './with-runtime.js';

interface EventsFlags {
  readonly pid?: string;
  readonly type?: string;
  readonly after?: string;
  readonly limit: string;
  readonly follow: boolean;
  readonly followMs?: string;
  readonly intervalMs: string;
}

const PAGE = 1000;

function parseSeq(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--after must be an event sequence number >= 0 (got ${JSON.stringify(text)})`);
  return n;
}

/** One event as one line (the follow format): seq, time, pid, type, data. */
export function eventLine(e: RuntimeEvent): string {
  return `${e.seq}  ${e.ts}  ${e.pid ?? '-'}  ${e.type}  ${JSON.stringify(e.data)}`;
}

/**
 * Prints every event after `after`, then keeps polling for new ones until SIGINT (or `stopAfterMs`). The store has
 * one writer at a time, so each poll opens it, reads by sequence and closes it again; a poll that finds the lease
 * held by another runtime (a long `libos run`) is skipped and the next one catches up.
 */
async function follow(
  o: GlobalOptions,
  q: EventQuery,
  after: number,
  intervalMs: number,
  stopAfterMs: number | undefined,
): Promise<number> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const timer = stopAfterMs === undefined ? undefined : setTimeout(onSignal, stopAfterMs);
  let cursor = after;
  try {
    while (!stop.signal.aborted) {
      let full = false;
      try {
        const rows = await withRuntime(o, (rt) => rt.events({ ...q, after: cursor, limit: PAGE }), { waitForLeaseMs: 0 });
        for (const e of rows) {
          process.stdout.write(o.json ? `${JSON.stringify(wire.eventToWire(e))}\n` : `${eventLine(e)}\n`);
          cursor = e.seq;
        }
        full = rows.length === PAGE;
      } catch (err) {
        if (!isLibosError(err) || err.code !== 'store_locked') throw err;
      }
      if (!full) await sleep(intervalMs, undefined, { signal: stop.signal }).catch(() => undefined);
    }
  } finally {
    clearTimeout(timer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return EXIT.ok;
}

/** `libos events`: durable events, or a live follow of new ones. */
export function registerEvents(program: Command, kit: CommandKit): void {
  program
    .command('events')
    .description('durable events, oldest first; --follow keeps printing new ones (one line each) until Ctrl-C')
    .option('--pid <pid>', 'only this process')
    .option('--type <type>', 'only this event type, e.g. message_posted')
    .option('--after <seq>', 'only events after this sequence number')
    .option('--limit <n>', 'at most n rows (without --follow)', '100')
    .option('--follow', 'print every event after --after, then new ones as they commit, until SIGINT (exit 0)', false)
    .option('--follow-ms <n>', 'with --follow: stop after n milliseconds (exit 0)')
    .option('--interval-ms <n>', 'with --follow: poll interval', '250')
    .action(
      kit.act(async (cmd: Command, f: EventsFlags) => {
        const o = kit.g(cmd);
        const limit = parsePositiveInt(f.limit, '--limit');
        const after = f.after === undefined ? undefined : parseSeq(f.after);
        const intervalMs = parsePositiveInt(f.intervalMs, '--interval-ms');
        const followMs = f.followMs === undefined ? undefined : parsePositiveInt(f.followMs, '--follow-ms');
        if (!f.follow && f.followMs !== undefined) throw new UsageError('--follow-ms needs --follow');
        const q: EventQuery = { ...(f.pid ? { pid: f.pid } : {}), ...(f.type ? { type: f.type } : {}) };
        if (f.follow) return follow(o, q, after ?? 0, intervalMs, followMs);
        await withRuntime(o, async (rt) => {
          const rows = await rt.events({ ...q, limit, ...(after !== undefined ? { after } : {}) });
          print(o, rows.map(wire.eventToWire), () =>
            table(
              rows.map((r) => ({ seq: r.seq, ts: r.ts, pid: r.pid, type: r.type, data: r.data })),
              ['seq', 'ts', 'pid', 'type', 'data'],
            ),
          );
        });
      }),
    );
}
