/** One Server-Sent Events message (comments and heartbeats are not messages). */
export interface SseMessage<T = unknown> {
  /** The SSE event name, e.g. `event.appended`, `human_request.updated`, `audit.appended`, `event.invalidated`. */
  readonly event: string;
  /** The `id:` line (an event's seq), when the message has one. */
  readonly id: string | undefined;
  readonly data: T;
}

/** Parses one SSE block (the lines between two blank lines); `null` for a comment-only block. */
function parseBlock(block: string): SseMessage | null {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const i = line.indexOf(':');
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'id') id = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0 && id === undefined) return null;
  const text = data.join('\n');
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    // Not JSON: the data as text.
  }
  return { event, id, data: parsed };
}

/**
 * Reads an SSE response body message by message (with `fetch`, so it can carry an Authorization header, which
 * `EventSource` cannot). Ends when the server ends the stream or `signal` aborts.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const onAbort = () => void reader.cancel().catch(() => {});
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return;
      buffer += decoder.decode(chunk.value, { stream: true }).replace(/\r\n?/g, '\n');
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const message = parseBlock(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (message) yield message;
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await reader.cancel().catch(() => {});
  }
}
