/** One SSE message as a client parses it (a comment has `comment` set and nothing else). */
export interface SseMessage {
  readonly event?: string;
  readonly id?: string;
  readonly data?: any;
  readonly comment?: string;
}

export interface SseClient {
  readonly status: number;
  readonly contentType: string | null;
  /** The next message or comment; rejects when the stream ends first. */
  next(): Promise<SseMessage>;
  /** The next message that is not a comment. */
  nextMessage(): Promise<SseMessage>;
  /** True when the server ended the stream (after every buffered message was read). */
  ended(): Promise<boolean>;
  close(): Promise<void>;
}

function parseBlock(block: string): SseMessage {
  const fields: Record<string, string> = {};
  const comments: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) comments.push(line.slice(1).trim());
    else {
      const i = line.indexOf(':');
      const key = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
      fields[key] = key === 'data' && fields.data !== undefined ? `${fields.data}\n${value}` : value;
    }
  }
  if (Object.keys(fields).length === 0) return { comment: comments.join('\n') };
  return {
    ...(fields.event !== undefined ? { event: fields.event } : {}),
    ...(fields.id !== undefined ? { id: fields.id } : {}),
    ...(fields.data !== undefined ? { data: JSON.parse(fields.data) } : {}),
  };
}

/** Opens an SSE stream with fetch and reads it message by message (the way a console without EventSource would). */
export async function openSse(url: string, headers: Record<string, string>): Promise<SseClient> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let done = false;
  const pull = async (): Promise<SseMessage | null> => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        return parseBlock(block);
      }
      if (done) return null;
      const chunk = await reader.read();
      if (chunk.done) done = true;
      else buffer += decoder.decode(chunk.value, { stream: true });
    }
  };
  const next = async () => {
    const m = await pull();
    if (!m) throw new Error(`the SSE stream ended (unread: ${JSON.stringify(buffer)})`);
    return m;
  };
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    next,
    async nextMessage() {
      for (;;) {
        const m = await next();
        if (m.comment === undefined) return m;
      }
    },
    async ended() {
      for (;;) {
        const m = await pull();
        if (!m) return true;
        if (m.comment === undefined) return false;
      }
    },
    async close() {
      await reader.cancel();
      controller.abort();
    },
  };
}
