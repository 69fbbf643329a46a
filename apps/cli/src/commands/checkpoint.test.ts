import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, expectRefused, libosOn, tempStore } from '../testing/libos-bin.js';

let dir: string;
let db: string;
beforeAll(() => {
  assertBuilt();
  ({ dir, db } = tempStore('libos-checkpoint-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('libos checkpoint', { timeout: 180_000 }, () => {
  it("[CP-21] create, list, inspect, diff, restore and fork as the host; --actor-pid acts with that process's grants", () => {
    const { run, json } = libosOn(db);
    const a = json('spawn', '--goal', 'keep a ledger').pid as string;
    json('grant', a, 'skill:agent-libos-object-memory', 'execute');
    expect(run('call', a, 'activate_skill', '{"skill_id":"agent-libos-object-memory"}').code).toBe(0);
    expect(run('call', a, 'create_memory_object', '{"type":"plan","name":"ledger","payload":{"entries":[]},"immutable":false}').code).toBe(
      0,
    );

    const cp = json('checkpoint', 'create', a, '--label', 'first');
    expect(cp).toMatchObject({ owner_pid: a, created_by: 'host', label: 'first', pids: [a], counts: { processes: 1, objects: 2 } });
    const id = cp.checkpoint_id as string;
    expect(json('checkpoint', 'list').checkpoints.map((c: { checkpoint_id: string }) => c.checkpoint_id)).toEqual([id]);
    expect(run('checkpoint', 'list').stdout).toMatch(new RegExp(`${id} +${a} +first`));
    const seen = json('checkpoint', 'inspect', id);
    expect(seen.items.objects.map((o: { name: string }) => o.name).sort()).toEqual(['goal', 'ledger']);

    // A later Object shows in the diff and is released by the restore.
    expect(run('call', a, 'create_memory_object', '{"type":"observation","name":"later","payload":1}').code).toBe(0);
    const diff = json('checkpoint', 'diff', id);
    expect(diff.changes.objects.counts).toEqual({ added: 1, removed: 0, changed: 0 });
    const restored = json('checkpoint', 'restore', id);
    expect(restored.report.objects.released_objects).toHaveLength(1);
    expect(run('checkpoint', 'restore', id).stdout).toMatch(
      /^restored ckpt_[0-9a-f]{16} \(restore_[0-9a-f]{16}\)\nprocesses: 1 restored, 0 ended/,
    );
    expect(
      json('objects', '--pid', a)
        .map((o: { name: string }) => o.name)
        .sort(),
    ).toEqual(['goal', 'ledger']);

    const forked = json('checkpoint', 'fork', id);
    expect(forked.root_pid).toMatch(/^pid_/);
    expect(forked.pids).toEqual({ [a]: forked.root_pid });
    expect(json('show', forked.root_pid)).toMatchObject({ pid: forked.root_pid, status: 'runnable', parent_pid: null });

    // As a process: the tools must be in its table (the Skill activated), and its grants decide. It owns read on its
    // checkpoint, nothing more.
    expectRefused(run('checkpoint', 'create', a, '--actor-pid', a), 1, 'tool_not_in_process_table');
    json('grant', a, 'skill:agent-libos-checkpoints', 'execute');
    expect(run('call', a, 'activate_skill', '{"skill_id":"agent-libos-checkpoints"}').code).toBe(0);
    expectRefused(run('checkpoint', 'create', a, '--actor-pid', a), 1, 'permission_denied');
    json('grant', a, `checkpoint:process:${a}`, 'write');
    const mine = json('checkpoint', 'create', a, '--actor-pid', a, '--label', 'mine');
    expect(mine.created_by).toBeUndefined();
    expect(json('checkpoint', 'list', '--actor-pid', a).checkpoints.map((c: { label: string }) => c.label)).toEqual(['mine', 'first']);
    expectRefused(run('checkpoint', 'restore', mine.checkpoint_id, '--actor-pid', a), 1, 'permission_denied');
    expectRefused(run('checkpoint', 'fork', mine.checkpoint_id, '--actor-pid', a), 1, 'permission_denied');
    const b = json('spawn', '--goal', 'stranger').pid as string;
    json('grant', b, 'skill:agent-libos-checkpoints', 'execute');
    expect(run('call', b, 'activate_skill', '{"skill_id":"agent-libos-checkpoints"}').code).toBe(0);
    expect(json('checkpoint', 'list', '--actor-pid', b).checkpoints).toEqual([]);
    expectRefused(run('checkpoint', 'inspect', id, '--actor-pid', b), 1, 'permission_denied');
  });

  it('[CP-21] an unknown id is checkpoint_not_found; a malformed id or pid is a usage error', () => {
    const { run } = libosOn(db);
    expectRefused(run('checkpoint', 'inspect', 'ckpt_00000000000000aa'), 1, 'checkpoint_not_found');
    expectRefused(run('checkpoint', 'restore', 'bogus'), 2, 'ckpt_<16 hex>');
    expectRefused(run('checkpoint', 'create', 'nobody'), 2, 'pid_<16 hex>');
    expectRefused(run('checkpoint', 'create', 'pid_00000000000000ab'), 1, 'process_not_found');
  });
});
