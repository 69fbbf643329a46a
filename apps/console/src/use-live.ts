import type { HumanRequest, LibosClient, ProcessInfo, Snapshot, StreamMessage } from '@libos/client';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './format.js';

/** One line of the live feed. */
export interface FeedItem {
  readonly key: number;
  readonly message: StreamMessage;
}

export type Connection = 'connecting' | 'live' | 'reconnecting';

export interface Live {
  readonly snapshot: Snapshot | null;
  /** Every process, with its tool table (refetched after each durable event). */
  readonly processes: readonly ProcessInfo[];
  /** The pending human requests. */
  readonly pending: readonly HumanRequest[];
  /** The newest stream messages first (at most FEED_MAX). */
  readonly feed: readonly FeedItem[];
  readonly connection: Connection;
  /** Bumped on every durable event: views of one process refetch when it moves. */
  readonly version: number;
  readonly error: string | null;
  /** Refetch processes and the queue now (after an action of this page). */
  refresh(): void;
}

const FEED_MAX = 200;
const RETRY_MS = 1000;

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * The live state of the server: a snapshot, then the SSE stream from the snapshot's cursor (so no event between the
 * two is missed), reconnecting from the last seq it saw; an invalidated cursor refetches the snapshot. Processes and
 * the human queue are refetched after events, one fetch at a time.
 */
export function useLive(client: LibosClient): Live {
  const [snapshot, setSnapshot] = useState<Snapshot | null>(null);
  const [processes, setProcesses] = useState<readonly ProcessInfo[]>([]);
  const [pending, setPending] = useState<readonly HumanRequest[]>([]);
  const [feed, setFeed] = useState<readonly FeedItem[]>([]);
  const [connection, setConnection] = useState<Connection>('connecting');
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const fetching = useRef(false);
  const again = useRef(false);
  const feedKey = useRef(0);

  const refresh = useCallback(() => {
    if (fetching.current) {
      again.current = true;
      return;
    }
    fetching.current = true;
    void (async () => {
      try {
        do {
          again.current = false;
          const [all, queue] = await Promise.all([client.processes(), client.humanRequests({ status: 'pending' })]);
          setProcesses(all);
          setPending(queue);
          setError(null);
        } while (again.current);
      } catch (err) {
        setError(errorText(err));
      } finally {
        fetching.current = false;
      }
    })();
  }, [client]);

  useEffect(() => {
    const abort = new AbortController();
    const { signal } = abort;
    void (async () => {
      let cursor: number | undefined;
      while (!signal.aborted) {
        try {
          if (cursor === undefined) {
            const s = await client.snapshot();
            setSnapshot(s);
            cursor = s.cursor;
            setVersion((v) => v + 1);
          }
          setConnection('live');
          for await (const m of client.stream({ cursor, signal })) {
            if (m.event === 'event.invalidated') {
              cursor = undefined;
              break;
            }
            if (m.id !== undefined) cursor = Number(m.id);
            const key = ++feedKey.current;
            setFeed((f) => [{ key, message: m }, ...f].slice(0, FEED_MAX));
            if (m.event !== 'audit.appended') setVersion((v) => v + 1);
          }
        } catch (err) {
          if (signal.aborted) return;
          setError(errorText(err));
        }
        if (signal.aborted) return;
        setConnection('reconnecting');
        await pause(RETRY_MS, signal);
      }
    })();
    return () => abort.abort();
  }, [client]);

  useEffect(() => {
    if (version > 0) refresh();
  }, [version, refresh]);

  return { snapshot, processes, pending, feed, connection, version, error, refresh };
}
