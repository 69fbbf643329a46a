import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, expectRefused, libosOn, tempStore, writeScript } from '../testing/libos-bin.js';

let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = tempStore('libos-human-').dir;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const QUESTION_SCRIPT = `processes:
  "*":
    - - tool: activate_skill
        args: { skill_id: agent-libos-child-processes }
    - - tool: ask_human
        args: { question: "Which colour should the report be?" }
    - - tool: process_exit
        args: { message: answered }
`;

// create_memory_namespace team/notes needs write on object_namespace:team; an `ask` grant turns that into a
// per-use permission request in the same human queue.
const PERMISSION_SCRIPT = `- - tool: activate_skill
    args: { skill_id: agent-libos-object-memory }
- - tool: create_memory_namespace
    args: { namespace: team }
- - tool: create_memory_namespace
    args: { namespace: team/notes }
`;

// request_permission asks a human for a standing permission for the caller itself.
const STANDING_SCRIPT = `- - tool: activate_skill
    args: { skill_id: agent-libos-authority }
- - tool: request_permission
    args: { resource: "object_namespace:team", rights: [write], reason: "I keep the team's notes" }
`;

describe('libos human', { timeout: 120_000 }, () => {
  it('answering a question wakes the waiting process; the next run finishes it', () => {
    const { run, json } = libosOn(`${dir}/question.db`);
    const pid = json('spawn', '--goal', 'ask the owner').pid;
    json('grant', pid, 'skill:agent-libos-child-processes', 'execute');
    json('grant', pid, 'human:owner', 'write');
    const script = writeScript(dir, 'question.yaml', QUESTION_SCRIPT);
    const first = run('run', '--script', script);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/q2 .* waiting_human +ask_human/);
    expect(first.stdout).toContain('human requests pending: 1 (libos human list)');
    expect(json('show', pid)).toMatchObject({ status: 'waiting_human' });

    const list = run('human', 'list');
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`hreq_[0-9a-f]{16} +${pid} +question +pending +Which colour should the report be\\?`));
    const [req] = json('human', 'list', '--pid', pid);
    expect(req).toMatchObject({ pid, kind: 'question', status: 'pending' });

    const answered = run('human', 'answer', req.id, '--approve', '--answer', 'green');
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stdout).toBe(`${req.id} approved ("green"); ${pid} is runnable (libos run continues it)\n`);
    expect(json('human', 'list')).toEqual([]);
    expect(json('human', 'list', '--status', 'approved')).toMatchObject([{ id: req.id, response: { approved: true, answer: 'green' } }]);

    const second = run('run', '--script', script);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(new RegExp(`q1 +${pid} +resumed +completed +ask_human`));
    expect(second.stdout).toMatch(/q2 .* process_terminal +process_exit/);
    expect(json('show', pid)).toMatchObject({ status: 'exited' });
    // Three model turns in all: the resumed ask_human made no model call.
    expect(json('llm-calls', '--pid', pid)).toHaveLength(3);

    expectRefused(run('human', 'answer', req.id, '--approve', '--answer', 'blue'), 1, 'human_request_not_pending');
  });

  it('cancel settles a pending question: the waiting ask_human resumes and fails, the process carries on', () => {
    const { run, json } = libosOn(`${dir}/cancel.db`);
    const pid = json('spawn', '--goal', 'ask the owner').pid;
    json('grant', pid, 'skill:agent-libos-child-processes', 'execute');
    json('grant', pid, 'human:owner', 'write');
    const script = writeScript(dir, 'cancel.yaml', QUESTION_SCRIPT);
    expect(run('run', '--script', script).code).toBe(0);
    const [req] = json('human', 'list', '--pid', pid);
    const cancelled = run('human', 'cancel', req.id, '--reason', 'nobody is around');
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toBe(`${req.id} cancelled; ${pid} is runnable\n`);
    expect(json('human', 'list', '--status', 'cancelled')).toMatchObject([{ id: req.id, response: { reason: 'nobody is around' } }]);
    const second = run('run', '--script', script);
    expect(second.stdout).toMatch(new RegExp(`q1 +${pid} +resumed +tool_failed +ask_human!cancelled`));
    expectRefused(run('human', 'cancel', req.id), 1, 'human_request_not_pending');
  });

  it('refuses contradictory or incomplete answers with one line, and nothing changes', () => {
    const { run, json } = libosOn(`${dir}/refusals.db`);
    const pid = json('spawn', '--goal', 'ask the owner').pid;
    json('grant', pid, 'skill:agent-libos-child-processes', 'execute');
    json('grant', pid, 'human:owner', 'write');
    expect(run('run', '--script', writeScript(dir, 'q2.yaml', QUESTION_SCRIPT)).code).toBe(0);
    const [req] = json('human', 'list');
    const before = { audit: json('audit', '--limit', '10000').length, events: json('events', '--limit', '10000').length };

    expectRefused(run('human', 'answer', req.id, '--answer', 'x'), 2, 'give exactly one of --approve or --reject');
    expectRefused(run('human', 'answer', req.id, '--approve', '--reject', '--answer', 'x'), 2, 'give exactly one of --approve or --reject');
    expectRefused(
      run('human', 'answer', req.id, '--approve', '--answer', 'x', '--decision', 'always_deny'),
      2,
      '--approve contradicts --decision always_deny',
    );
    expectRefused(
      run('human', 'answer', req.id, '--reject', '--decision', 'always_allow'),
      2,
      '--reject contradicts --decision always_allow',
    );
    expectRefused(run('human', 'answer', req.id, '--approve'), 2, '--approve of a question needs --answer <text>');
    expectRefused(run('human', 'answer', req.id, '--approve', '--answer', '   '), 2, '--approve of a question needs --answer <text>');
    expectRefused(
      run('human', 'answer', req.id, '--reject', '--decision', 'ask_each_time'),
      2,
      '--decision applies to permission requests',
    );
    expect(run('human', 'answer', req.id, '--approve', '--answer', 'x', '--decision', 'sometimes').code).toBe(2);
    expectRefused(run('human', 'answer', 'hreq_0000000000000000', '--reject'), 1, 'human_request_not_found');
    expect(run('human', 'list', '--status', 'maybe').code).toBe(2);

    expect(json('human', 'list')).toMatchObject([{ id: req.id, status: 'pending', response: null }]);
    expect(json('show', pid)).toMatchObject({ status: 'waiting_human' });
    expect({ audit: json('audit', '--limit', '10000').length, events: json('events', '--limit', '10000').length }).toEqual(before);

    // A rejection is the other way to settle it: the waiting ask_human fails, and the process goes on.
    const rejected = run('human', 'answer', req.id, '--reject');
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(rejected.stdout).toContain(`${req.id} rejected`);
    expect(json('human', 'list', '--status', 'rejected')).toHaveLength(1);
  });

  it('a permission request (an ask grant met at the effect) sits in the same queue; --approve lets the saved call run once', () => {
    const { run, json } = libosOn(`${dir}/permission.db`);
    const pid = json('spawn', '--goal', 'make a team namespace').pid;
    json('grant', pid, 'skill:agent-libos-object-memory', 'execute');
    json('grant', pid, 'object_namespace:team', 'write', '--effect', 'ask');
    const script = writeScript(dir, 'permission.yaml', PERMISSION_SCRIPT);
    expect(run('run', '--script', script).stdout).toMatch(/q3 .* waiting_human +create_memory_namespace/);
    const [req] = json('human', 'list');
    expect(req).toMatchObject({
      pid,
      kind: 'permission',
      status: 'pending',
      details: { resource: 'object_namespace:team', rights: ['write'] },
    });
    expect(run('human', 'list').stdout).toContain('permission  pending  write on object_namespace:team');

    const before = json('audit', '--limit', '10000').length;
    expectRefused(
      run('human', 'answer', req.id, '--approve', '--decision', 'always_deny'),
      2,
      '--approve contradicts --decision always_deny',
    );
    expectRefused(
      run('human', 'answer', req.id, '--reject', '--decision', 'always_allow'),
      2,
      '--reject contradicts --decision always_allow',
    );
    expect(json('audit', '--limit', '10000').length).toBe(before);

    const ok = run('human', 'answer', req.id, '--approve', '--decision', 'ask_each_time');
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`${req.id} approved (ask_each_time); ${pid} is runnable`);
    const resumed = run('run', '--script', script);
    expect(resumed.stdout).toMatch(new RegExp(`q1 +${pid} +resumed +completed +create_memory_namespace`));
    expect(json('show', pid)).toMatchObject({ status: 'exited' });
  });

  it('[K-8.1] an answered question survives a second libos call that would wait: it is refused, and the next run resumes the first', () => {
    const { run, json } = libosOn(`${dir}/second-call.db`);
    const pid = json('spawn', '--goal', 'ask the owner twice').pid;
    json('grant', pid, 'skill:agent-libos-child-processes', 'execute');
    json('grant', pid, 'human:owner', 'write');
    expect(run('call', pid, 'activate_skill', '{"skill_id":"agent-libos-child-processes"}').code).toBe(0);
    const first = json('call', pid, 'ask_human', '{"question":"first?"}');
    expect(first).toMatchObject({ ok: true, wait: { kind: 'human' } });
    const [h1] = json('human', 'list', '--pid', pid);
    expect(run('human', 'answer', h1.id, '--approve', '--answer', 'ANSWER-1').code).toBe(0);

    const second = run('--json', 'call', pid, 'ask_human', '{"question":"second?"}');
    expect(second.code, second.stderr).toBe(1);
    const refused = JSON.parse(second.stdout);
    const details = { waiting_call_id: first.call_id, waiting_tool: 'ask_human' };
    expect(refused).toMatchObject({ ok: false, error: { code: 'call_already_waiting', details } });
    expect(refused.error.message).toContain('libos run');
    expect(json('human', 'list', '--pid', pid, '--status', 'all').map((r: { id: string }) => r.id)).toEqual([h1.id]);
    expect(json('show', pid)).toMatchObject({ status: 'runnable' });

    const script = writeScript(dir, 'second-call.yaml', '- - tool: process_exit\n    args: { message: done }\n');
    const resumed = run('run', '--script', script);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(new RegExp(`q1 +${pid} +resumed +completed +ask_human`));
    expect(json('show', pid)).toMatchObject({ status: 'exited' });
    const audit: { call_id: string; decision: string }[] = json('audit', '--pid', pid, '--action', 'tool.call', '--limit', '10000');
    const decisions = (callId: string) => audit.filter((a) => a.call_id === callId).map((a) => a.decision);
    expect(decisions(first.call_id)).toEqual(['waiting', 'ok']);
    expect(decisions(refused.call_id)).toEqual(['call_already_waiting']);
    // The answered call published its result (the answer) for the process; the root's exit then released it (S-E8).
    const created: { data: { name: string } }[] = json('events', '--pid', pid, '--type', 'object_created');
    expect(created.map((e) => e.data.name)).toContain(`tool_result:${first.call_id}`);
  });

  it('a standing request (request_permission) answered --reject --decision always_deny installs a deny record', () => {
    const { run, json } = libosOn(`${dir}/standing.db`);
    const pid = json('spawn', '--goal', 'ask for a standing permission').pid;
    json('grant', pid, 'skill:agent-libos-authority', 'execute');
    json('grant', pid, 'human:owner', 'write');
    const script = writeScript(dir, 'standing.yaml', STANDING_SCRIPT);
    expect(run('run', '--script', script).stdout).toMatch(/q2 .* waiting_human +request_permission/);
    const [req] = json('human', 'list', '--pid', pid);
    expect(req).toMatchObject({
      kind: 'permission',
      prompt: "I keep the team's notes",
      details: { resource: 'object_namespace:team', rights: ['write'] },
    });
    const r = run('human', 'answer', req.id, '--reject', '--decision', 'always_deny');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${req.id} rejected (always_deny); ${pid} is runnable`);
    expect(json('caps', pid)).toEqual(
      expect.arrayContaining([expect.objectContaining({ effect: 'deny', resource: 'object_namespace:team', rights: ['write'] })]),
    );
    const resumed = run('run', '--script', script);
    expect(resumed.stdout).toMatch(new RegExp(`q1 +${pid} +resumed +completed +request_permission`));
    expect(json('show', pid)).toMatchObject({ status: 'exited' });
  });
});
