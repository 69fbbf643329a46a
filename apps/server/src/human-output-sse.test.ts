import { afterEach, expect, it } from 'vitest';
import { startServer, type Harness } from './internal/testing/harness.js';
import { openSse, type SseClient } from './internal/testing/sse-client.js';

let h: Harness | undefined;
let stream: SseClient | undefined;
afterEach(async () => {
  await stream?.close();
  await h?.stop();
  h = stream = undefined;
});

it("a process's human_output reaches the SSE stream as human_output.appended, carrying its text", async () => {
  h = await startServer();
  const p = await h.rt.spawn({ goal: 'report' });
  await h.rt.activateSkill(p.pid, 'agent-libos-human-output');
  await h.rt.grant(p.pid, 'human:owner', ['write']);
  stream = await openSse(`${h.server.url}/api/events/stream`, { authorization: `Bearer ${h.server.token}` });
  expect(await stream.next()).toEqual({ comment: 'connected' });
  expect((await h.rt.call(p.pid, 'human_output', { message: 'Deploy finished.', kind: 'result' })).ok).toBe(true);
  for (;;) {
    const m = await stream.nextMessage();
    if ((m.data as { type?: string }).type !== 'human_output') continue;
    expect(m).toMatchObject({
      event: 'human_output.appended',
      data: { type: 'human_output', pid: p.pid, data: { human: 'owner', kind: 'result', text: 'Deploy finished.' } },
    });
    break;
  }
});
