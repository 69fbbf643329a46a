import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { processMcpServer } from './mcp.js';
import { startServer, type Harness } from './internal/testing/harness.js';

let h: Harness | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await h?.stop();
  h = undefined;
});

/** The official client connected in memory to `processMcpServer(rt, pid, opts)`. */
async function connect(
  pid: string,
  listChanged: boolean,
): Promise<{ client: Client; changes: () => number; nextChange: () => Promise<void> }> {
  const server = processMcpServer(h!.rt, pid, { listChanged });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'libos-test', version: '0.0.0' });
  let count = 0;
  let waiting: (() => void) | null = null;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    count++;
    waiting?.();
  });
  await client.connect(clientSide);
  closers.push(async () => {
    await client.close();
    await server.close();
  });
  return { client, changes: () => count, nextChange: () => new Promise<void>((resolve) => (waiting = resolve)) };
}

describe('MCP tools/list_changed (a session that lives as long as its transport, e.g. stdio)', () => {
  it('[K-8.5] declared only when delivered: a Skill activation sends tools/list_changed; tools/list shows its tools', async () => {
    h = await startServer();
    const p = await h.rt.spawn({ goal: 'x' });
    const { client, nextChange } = await connect(p.pid, true);
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('ask_human');
    const changed = nextChange();
    await h.rt.activateSkill(p.pid, 'agent-libos-child-processes');
    await changed;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('ask_human');
  });

  it('without it (the stateless HTTP endpoint) tools carry no listChanged and nothing is sent', async () => {
    h = await startServer();
    const p = await h.rt.spawn({ goal: 'x' });
    const quiet = await connect(p.pid, false);
    const loud = await connect(p.pid, true);
    expect(quiet.client.getServerCapabilities()?.tools).toEqual({});
    const changed = loud.nextChange();
    await h.rt.activateSkill(p.pid, 'agent-libos-child-processes');
    await changed;
    // The notifying session heard of the change; the quiet one, connected as long, heard nothing.
    expect(loud.changes()).toBe(1);
    expect(quiet.changes()).toBe(0);
  });
});
