import { brief, clock } from './format.js';
import type { Connection, FeedItem } from './use-live.js';

/** The live stream as it arrives, newest first: durable events by seq, audit records, invalidations. */
export function EventFeed(props: { readonly feed: readonly FeedItem[]; readonly connection: Connection }) {
  return (
    <div>
      <p class="muted" data-testid="connection" data-state={props.connection}>
        stream: {props.connection}
      </p>
      <ol class="feed" data-testid="event-feed">
        {props.feed.map(({ key, message: m }) => {
          const d = m.data as Record<string, unknown>;
          const what = m.event === 'audit.appended' ? `audit ${String(d.action)}` : typeof d.type === 'string' ? d.type : m.event;
          return (
            <li key={key} data-event={m.event} data-type={typeof d.type === 'string' ? d.type : undefined}>
              <span class="muted">{m.id ?? '·'}</span> <span class="muted">{clock((d.ts as string | undefined) ?? null)}</span>{' '}
              <strong>{what}</strong> {typeof d.pid === 'string' && <code>{d.pid}</code>}{' '}
              <span class="muted">{brief(d.data ?? d.details ?? d.message ?? '', 120)}</span>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
