import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, BIN, expectRefused, libosOn, startLibos, tempStore } from '../testing/libos-bin.js';

let dir: string;
let db: string;
beforeAll(() => {
  assertBuilt();
  ({ dir, db } = tempStore('libos-events-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('libos events', { timeout: 120_000 }, () => {
  it('--follow prints the events so far, then one posted while it follows; SIGINT ends it with exit 0', async () => {
    const { json } = libosOn(db);
    const pid = json('spawn', '--goal', 'be followed').pid;
    const follower = startLibos(db, ['events', '--follow', '--interval-ms', '50', '--follow-ms', '60000']);
    await follower.waitFor('process_created');
    expect(follower.stdout).not.toContain('message_posted');
    // Posted from another process while the follower polls the same store (the writer lease is taken in turn).
    const sent = spawnSync(process.execPath, [BIN, '--db', db, '--json', 'send', pid, 'are you there?'], { encoding: 'utf8' });
    expect(sent.status, sent.stderr).toBe(0);
    const messageId = JSON.parse(sent.stdout).message_id;
    await follower.waitFor(messageId);
    follower.child.kill('SIGINT');
    expect(await follower.exited).toBe(0);
    const line = follower.stdout.split('\n').find((l) => l.includes(messageId))!;
    expect(line).toMatch(new RegExp(`^\\d+  \\S+Z  ${pid}  message_posted  \\{.*"message_id":"${messageId}"`));
    // Each event once, in sequence order.
    const seqs = follower.stdout
      .trim()
      .split('\n')
      .map((l) => Number(l.split('  ')[0]));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(follower.stderr).toBe('');
  });

  it('--follow-ms stops by itself (exit 0); --json follows as one JSON object per line; --after and --type filter', async () => {
    const { json } = libosOn(db);
    const all = json('events', '--limit', '10000');
    const last = all.at(-1).seq;
    const follower = startLibos(db, ['--json', 'events', '--follow', '--after', String(last - 2), '--follow-ms', '300']);
    expect(await follower.exited).toBe(0);
    expect(
      follower.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).seq),
    ).toEqual([last - 1, last]);
    expect(json('events', '--after', String(last - 1))).toMatchObject([{ seq: last }]);
    expect(json('events', '--type', 'process_created').every((e: { type: string }) => e.type === 'process_created')).toBe(true);
  });

  it('refuses bad flags with exit 2', () => {
    const { run } = libosOn(db);
    expectRefused(run('events', '--follow-ms', '100'), 2, '--follow-ms needs --follow');
    expectRefused(run('events', '--after', '-1'), 2, '--after must be an event sequence number');
    expectRefused(run('events', '--follow', '--interval-ms', '0'), 2, '--interval-ms must be a positive integer');
    expectRefused(run('llm-calls', '--limit', '0'), 2, '--limit must be a positive integer');
    expectRefused(run('llm-calls', '--pid', 'pid_0000000000000000'), 1, 'process_not_found');
  });
});
