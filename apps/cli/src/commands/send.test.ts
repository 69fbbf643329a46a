import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, expectRefused, libosOn, tempStore, writeScript } from '../testing/libos-bin.js';
import { messagePayload } from './send.js';

let dir: string;
let db: string;
beforeAll(() => {
  assertBuilt();
  ({ dir, db } = tempStore('libos-send-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The process waits for a message on channel "orders", then exits.
const WAIT_SCRIPT = `- - tool: activate_skill
    args: { skill_id: agent-libos-child-processes }
- - tool: receive_process_messages
    args: { channel: orders, block: true }
- - tool: process_exit
    args: { message: got it }
`;

describe('libos send', { timeout: 120_000 }, () => {
  it('posts a human message; a matching one wakes a process that waits for it', () => {
    const { run, json } = libosOn(db);
    const pid = json('spawn', '--goal', 'wait for orders').pid;
    json('grant', pid, 'skill:agent-libos-child-processes', 'execute');
    const script = writeScript(dir, 'wait.yaml', WAIT_SCRIPT);
    expect(run('run', '--script', script).stdout).toMatch(/q2 .* waiting_message +receive_process_messages/);

    // A message on another channel does not match the wait: the process keeps waiting.
    const other = json('send', pid, '{"note": "not an order"}', '--channel', 'chat');
    expect(other).toMatchObject({
      sender: 'human:owner',
      recipient_pid: pid,
      channel: 'chat',
      delivery: 'normal',
      payload: { note: 'not an order' },
      woke: false,
    });
    expect(json('show', pid)).toMatchObject({ status: 'waiting_event' });

    // Text that is not JSON becomes {"text": ...}; this one matches and wakes it.
    const sent = run('send', pid, 'ship the blue one', '--channel', 'orders', '--from', 'human:alice', '--interrupt');
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(
      new RegExp(`^msg_[0-9a-f]{16} interrupt message from human:alice to ${pid} on channel orders; ${pid} woke \\(now runnable\\)\\n$`),
    );
    expect(json('show', pid)).toMatchObject({ status: 'runnable' });
    const events = json('events', '--pid', pid, '--type', 'message_posted');
    expect(events.map((e: { data: { sender: string; channel: string } }) => [e.data.sender, e.data.channel])).toEqual([
      ['human:owner', 'chat'],
      ['human:alice', 'orders'],
    ]);

    const resumed = run('run', '--script', script);
    expect(resumed.stdout).toMatch(new RegExp(`q1 +${pid} +resumed +completed +receive_process_messages`));
    expect(json('show', pid)).toMatchObject({ status: 'exited' });
  });

  it('refuses a bad sender, channel, pid or recipient with one line, writing nothing', () => {
    const { run, json } = libosOn(`${dir}/refusals.db`);
    const done = json('spawn', '--goal', 'exit at once').pid;
    expect(run('run', '--script', writeScript(dir, 'exit.json', '[[{"tool":"process_exit"}]]')).code).toBe(0);
    const live = json('spawn', '--goal', 'idle').pid;
    const before = json('events', '--limit', '10000').length;
    expectRefused(run('send', live, 'hi', '--from', 'alice'), 2, '--from must be human:<name>');
    expectRefused(run('send', live, 'hi', '--from', 'pid_0000000000000001'), 2, '--from must be human:<name>');
    expectRefused(run('send', live, 'hi', '--channel', 'two words'), 2, '--channel must be 1 to 64 characters');
    expectRefused(run('send', 'pid_0000000000000000', 'hi'), 1, 'process_not_found');
    expectRefused(run('send', done, 'hi'), 1, `is exited and receives no messages`);
    expect(run('send', live).code).toBe(2);
    expect(json('events', '--limit', '10000').length).toBe(before);
  });

  it('messagePayload: JSON when it parses, else {text}', () => {
    expect(messagePayload('{"a":1}')).toEqual({ a: 1 });
    expect(messagePayload('[1,2]')).toEqual([1, 2]);
    expect(messagePayload('hello {world')).toEqual({ text: 'hello {world' });
  });
});
