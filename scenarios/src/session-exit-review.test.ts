// Long file: one scenario's stories over one shared harness; split, each file would repeat the setup.
// The cumulative completion review that gates process_exit for review-gated images (K-38/K-39;
// docs/behaviour/session.md S-R*/S-E10/S-B8: probe, ACK, probe again), against the real kernel.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type Runtime, type ToolCallResult } from '@libos/kernel';
import { objectMemory, type ObjectMemoryService } from '@libos/object-memory';
import { sha256Hex, canonicalJson } from '@libos/sdk';
import { session, type CompletionEvidence, type CompletionReview } from '@libos/session';
import { afterEach, describe, expect, it } from 'vitest';

const CODING = 'coding-agent:v0';
const CHILD_SKILL = 'agent-libos-child-processes';
const MEMORY_SKILL = 'agent-libos-object-memory';

const runtimes: Runtime[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(path = ':memory:'): Promise<Runtime> {
  const rt = await openRuntime({ path, plugins: [capabilities(), objectMemory(), session()] });
  runtimes.push(rt);
  return rt;
}

/** A coding agent with the session, memory and mailbox Skills active. */
async function codingAgent(rt: Runtime, goal = 'Keep a ledger of the work in Object Memory.'): Promise<string> {
  const p = await rt.spawn({ image: CODING, goal });
  await rt.activateSkill(p.pid, 'agent-libos-runtime-session');
  await rt.activateSkill(p.pid, MEMORY_SKILL);
  await rt.activateSkill(p.pid, CHILD_SKILL);
  return p.pid;
}

async function ok(rt: Runtime, pid: string, tool: string, args: unknown = {}): Promise<any> {
  const r = await rt.call(pid, tool, args);
  if (!r.ok) throw new Error(`${tool} failed: ${r.error.code}: ${r.error.message}`);
  return r.payload;
}

/** A bare process_exit that must come back as a review. */
async function probe(rt: Runtime, pid: string): Promise<CompletionReview> {
  const out = await ok(rt, pid, 'process_exit', {});
  expect(out).toMatchObject({ status: 'completion_review_required', result_oid: null });
  return out.completion_review as CompletionReview;
}

/** Evidence that answers a review: one completed check per expected ref, citing `tool`. */
function evidenceFor(review: CompletionReview, tool: string): CompletionEvidence {
  return {
    goal_oid: review.goal.oid,
    reviewed_message_ids: [...review.acknowledged_human_message_ids],
    acceptance_checks: review.expected_source_refs.map((ref) => ({
      requirement: ref === review.goal.oid ? 'keep the ledger' : `follow-up ${ref}`,
      source_refs: [ref],
      status: 'completed' as const,
      evidence_tool_calls: [tool],
      evidence_summary: `did it with ${tool}`,
    })),
    final_verification: [tool],
  };
}

const reviewOf = (r: ToolCallResult) => (r.ok ? ((r.payload as { completion_review: CompletionReview }).completion_review ?? null) : null);

describe('review-gated process_exit', () => {
  it(`[K-38] [S-R1] [S-R19] coding-agent bare exit returns completion_review_required with a token and stays live; base-agent exits at \
once`, async () => {
    const rt = await open();
    const pid = await codingAgent(rt);
    const capsBefore = await rt.capabilities(pid);
    const review = await probe(rt, pid);
    const proc = await rt.process(pid);
    expect(proc.status).toBe('runnable');
    expect(review).toEqual({
      schema_version: 2,
      review_token: expect.stringMatching(/^exitrev_[0-9a-f]{64}$/),
      goal: {
        oid: proc.goalOid,
        version: 1,
        payload_sha256: sha256Hex(canonicalJson(proc.goal)),
        source: 'object_memory',
        reference: {
          kind: 'object_memory',
          namespace: `process:${pid}`,
          name: 'goal',
          tool: 'read_memory_object',
          arguments: { namespace: `process:${pid}`, name: 'goal', max_payload_chars: 200_000 },
        },
      },
      expected_source_refs: [proc.goalOid],
      acknowledged_human_message_count: 0,
      acknowledged_human_message_ids: [],
      acknowledged_human_message_sha256: sha256Hex('[]'),
      acknowledged_human_message_reference: {
        kind: 'process_message_ids',
        activate_skill: CHILD_SKILL,
        tool: 'read_process_messages',
        fixed_arguments: { include_acked: true, ack: false },
        copy_arguments: { message_ids: 'acknowledged_human_message_ids', limit: 'acknowledged_human_message_count' },
      },
      unread_human_message_ids: [],
      observed_successful_tool_calls: [],
      explicit_unobserved_tool_hints: [],
      required_evidence_shape: expect.objectContaining({ goal_oid: proc.goalOid, reviewed_message_ids: [] }),
      instructions: expect.arrayContaining([expect.stringContaining('Only status "exited" confirms completion')]),
      validation_errors: [],
      task_run: null,
    });
    expect(await rt.audit({ pid, action: 'process.exit_review_required' })).toEqual([
      expect.objectContaining({
        target: `process:${pid}`,
        decision: 'probe',
        details: expect.objectContaining({ review_token: review.review_token, authority_changed: false, goal_source: 'object_memory' }),
      }),
    ]);
    expect(await rt.audit({ pid, action: 'process.exit' })).toEqual([]);
    expect(await rt.capabilities(pid)).toEqual(capsBefore);

    const base = await rt.spawn({ goal: 'leave at once' });
    expect(await ok(rt, base.pid, 'process_exit', {})).toMatchObject({ status: 'exited', result_oid: null });
    expect((await rt.process(base.pid)).status).toBe('exited');
  });

  it('[K-39] [S-R3] [S-R4] [S-R5] [S-R20] an ACK makes a new token; the stale token gives a new review; valid evidence exits', async () => {
    const rt = await open();
    const pid = await codingAgent(rt);
    await ok(rt, pid, 'create_memory_object', { type: 'observation', name: 'ledger', payload: { entries: ['started'] } });
    const first = await probe(rt, pid);
    expect(first.observed_successful_tool_calls).toEqual(['create_memory_object']);

    const posted = await rt.sendMessage(pid, { text: 'SECRET-BODY: also add a summary' }, { from: 'human:owner' });
    const stale = reviewOf(
      await rt.call(pid, 'process_exit', {
        review_token: first.review_token,
        completion_evidence: evidenceFor(first, 'create_memory_object'),
      }),
    )!;
    expect(stale.unread_human_message_ids).toEqual([posted.messageId]);
    expect(stale.validation_errors[0]).toContain('read and acknowledge every unread human message');
    expect(stale.validation_errors[1]).toContain('review_token is missing or stale');
    expect(JSON.stringify(stale)).not.toContain('SECRET-BODY');
    expect(stale.review_token).not.toBe(first.review_token);

    const read = await ok(rt, pid, 'read_process_messages', { message_ids: [posted.messageId] });
    expect(read.acked_message_ids).toEqual([posted.messageId]);
    const afterAck = await probe(rt, pid);
    expect(afterAck.review_token).not.toBe(stale.review_token);
    expect(afterAck.unread_human_message_ids).toEqual([]);
    expect(afterAck.acknowledged_human_message_ids).toEqual([posted.messageId]);
    expect(afterAck.acknowledged_human_message_count).toBe(1);
    expect(afterAck.expected_source_refs).toEqual([afterAck.goal.oid, posted.messageId]);

    // The pre-ACK token with otherwise valid evidence: only the stale-token error, and the process stays live.
    const evidence = evidenceFor(afterAck, 'create_memory_object');
    const rejected = reviewOf(await rt.call(pid, 'process_exit', { review_token: stale.review_token, completion_evidence: evidence }))!;
    expect(rejected.validation_errors).toEqual([expect.stringContaining('review_token is missing or stale')]);
    expect(rejected.review_token).toBe(afterAck.review_token);
    expect((await rt.process(pid)).status).toBe('runnable');
    expect(await rt.audit({ pid, action: 'process.exit_review_required' })).toHaveLength(4);

    const exited = await ok(rt, pid, 'process_exit', {
      review_token: afterAck.review_token,
      completion_evidence: evidence,
      payload: { summary: 'ledger kept' },
    });
    expect(exited).toMatchObject({ status: 'exited', pid, result_oid: expect.stringMatching(/^obj_/) });
    expect((await rt.process(pid)).status).toBe('exited');
    expect(await rt.audit({ pid, action: 'process.exit_review_passed' })).toEqual([
      expect.objectContaining({
        decision: 'passed',
        details: {
          review_token: afterAck.review_token,
          goal_source: 'object_memory',
          evidence_sha256: sha256Hex(canonicalJson(evidence)),
          acceptance_check_count: 2,
          authority_changed: false,
        },
      }),
    ]);
    expect(await rt.audit({ pid, action: 'process.exit' })).toEqual([expect.objectContaining({ decision: 'exited' })]);
    const result = await rt.transaction((scope) => scope.service<ObjectMemoryService>('objects').readPayload(exited.result_oid));
    expect(result).toEqual({ summary: 'ledger kept', completion_evidence: evidence });
  });

  it('[S-R2] [S-R14] a repeat probe, a successful tool and a process message keep the token; a failed tool is never observed', async () => {
    const rt = await open();
    const pid = await codingAgent(rt);
    const a = await probe(rt, pid);
    expect((await probe(rt, pid)).review_token).toBe(a.review_token);
    // "none"/"null" as a token is no token: still a bare probe.
    expect((await probe(rt, pid)).validation_errors).toEqual([]);
    expect((await ok(rt, pid, 'process_exit', { review_token: 'None' })).completion_review).toMatchObject({
      review_token: a.review_token,
      validation_errors: [],
    });
    await ok(rt, pid, 'list_memory_namespace', {});
    const denied = await rt.call(pid, 'get_current_time', {});
    expect(denied).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    await ok(rt, pid, 'list_memory_namespace', {});
    // A message from a process (itself here) is not Human input: it neither changes the token nor appears in the review.
    await ok(rt, pid, 'send_process_message', { to_pid: pid, payload: { note: 'to self' } });
    const b = await probe(rt, pid);
    expect(b.review_token).toBe(a.review_token);
    expect(b.unread_human_message_ids).toEqual([]);
    expect(b.observed_successful_tool_calls).toEqual(['list_memory_namespace', 'send_process_message']);
  });

  it(`[S-R18] [S-R21] the goal reference reads the payload that matches its hash; the message reference reads exactly the acked messages \
and changes nothing`, async () => {
    const rt = await open();
    const pid = await codingAgent(rt, 'Write `the ledger` and report.');
    const m1 = await rt.sendMessage(pid, { n: 1 });
    const m2 = await rt.sendMessage(pid, { n: 2 });
    await ok(rt, pid, 'read_process_messages', { message_ids: [m1.messageId] });
    const review = await probe(rt, pid);
    expect(JSON.stringify(review)).not.toContain('the ledger');
    expect(review).not.toHaveProperty('goal.fallback');

    const goal = await ok(rt, pid, review.goal.reference.tool, review.goal.reference.arguments);
    expect(goal).toMatchObject({
      representation: 'json_value',
      payload: 'Write `the ledger` and report.',
      sha256: review.goal.payload_sha256,
    });

    const ref = review.acknowledged_human_message_reference;
    const args = {
      ...ref.fixed_arguments,
      message_ids: review.acknowledged_human_message_ids,
      limit: review.acknowledged_human_message_count,
    };
    const read = await ok(rt, pid, ref.tool, args);
    expect(read.messages.map((m: { message_id: string }) => m.message_id)).toEqual([m1.messageId]);
    expect(read).toMatchObject({ acked_message_ids: [], has_more: false });
    const again = await probe(rt, pid);
    expect(again.review_token).toBe(review.review_token);
    expect(again.unread_human_message_ids).toEqual([m2.messageId]);
  });

  it('[S-R6] [S-R7] [S-R8] [S-R9] [S-R22] evidence errors come back as a fresh review, in order, and the process stays live', async () => {
    const rt = await open();
    const pid = await codingAgent(rt);
    const msg = await rt.sendMessage(pid, { text: 'and a summary' });
    await ok(rt, pid, 'read_process_messages', {});
    await ok(rt, pid, 'list_memory_namespace', {});
    await ok(rt, pid, 'list_memory_namespace', {});
    const review = await probe(rt, pid);
    const goalOid = review.goal.oid;
    const submit = async (evidence: CompletionEvidence) =>
      reviewOf(await rt.call(pid, 'process_exit', { review_token: review.review_token, completion_evidence: evidence }))!.validation_errors;

    // R6: a check that lacks the message ref and cites git_diff (never run).
    expect(
      await submit({
        goal_oid: goalOid,
        reviewed_message_ids: [msg.messageId],
        acceptance_checks: [
          { requirement: 'r', source_refs: [goalOid], status: 'completed', evidence_tool_calls: ['git_diff'], evidence_summary: 's' },
        ],
        final_verification: ['list_memory_namespace'],
      }),
    ).toEqual([
      expect.stringContaining('acceptance_checks[0].evidence_tool_calls cites unobserved tools: git_diff'),
      expect.stringContaining(`acceptance checks do not cover every expected_source_ref: ${msg.messageId}`),
    ]);

    // R7: completed with [] is refused; blocked with [] and a reason is accepted (checked without committing: the goal check is wrong).
    const checks = (status: 'completed' | 'blocked') => [
      {
        requirement: 'r',
        source_refs: [goalOid],
        status: 'completed' as const,
        evidence_tool_calls: ['list_memory_namespace'],
        evidence_summary: 's',
      },
      {
        requirement: 'summary',
        source_refs: [msg.messageId],
        status,
        evidence_tool_calls: [],
        evidence_summary: 'no summary tool in this runtime',
      },
    ];
    expect(
      await submit({
        goal_oid: 'obj_ffffffffffffffff',
        reviewed_message_ids: [msg.messageId],
        acceptance_checks: checks('completed'),
        final_verification: ['list_memory_namespace'],
      }),
    ).toEqual([
      expect.stringContaining('completion_evidence.goal_oid'),
      expect.stringContaining('acceptance_checks[1].evidence_tool_calls must cite evidence for completed work'),
    ]);
    expect(
      await submit({
        goal_oid: 'obj_ffffffffffffffff',
        reviewed_message_ids: [msg.messageId],
        acceptance_checks: checks('blocked'),
        final_verification: ['list_memory_namespace'],
      }),
    ).toEqual([expect.stringContaining('completion_evidence.goal_oid')]);

    // R8 + R9 + R22: process_exit in final_verification, duplicate message ids, an unknown ref, a call id cited.
    expect(
      await submit({
        goal_oid: goalOid,
        reviewed_message_ids: [msg.messageId, msg.messageId],
        acceptance_checks: [
          {
            requirement: 'r',
            source_refs: [goalOid, msg.messageId, 'x'],
            status: 'blocked',
            evidence_tool_calls: ['call_0001'],
            evidence_summary: 'reason',
          },
        ],
        final_verification: ['process_exit'],
      }),
    ).toEqual([
      expect.stringContaining('completion_evidence.reviewed_message_ids'),
      expect.stringContaining('acceptance_checks[0].source_refs contains unknown references: x'),
      expect.stringContaining('acceptance_checks[0].evidence_tool_calls cites unobserved tools: call_0001'),
      expect.stringContaining('completion_evidence.final_verification cites unobserved tools: process_exit'),
    ]);
    expect((await rt.process(pid)).status).toBe('runnable');
    // A tool run twice is one observed name.
    expect((await probe(rt, pid)).observed_successful_tool_calls).toEqual(['read_process_messages', 'list_memory_namespace']);
  });

  it('[S-R15] a tool the goal names in backticks is a hint that blocks exit until it succeeds', async () => {
    const rt = await open();
    const pid = await codingAgent(rt, 'Check the time with `get_current_time` before you finish.');
    const review = await probe(rt, pid);
    expect(review.explicit_unobserved_tool_hints).toEqual(['get_current_time']);
    await ok(rt, pid, 'list_memory_namespace', {});
    const blocked = reviewOf(
      await rt.call(pid, 'process_exit', {
        review_token: review.review_token,
        completion_evidence: evidenceFor(review, 'list_memory_namespace'),
      }),
    )!;
    expect(blocked.validation_errors).toEqual([
      expect.stringContaining('explicit goal requirements still need successful tool calls: get_current_time'),
    ]);
    await rt.grant(pid, 'clock:now', ['read']);
    await ok(rt, pid, 'get_current_time', {});
    const after = await probe(rt, pid);
    expect(after.explicit_unobserved_tool_hints).toEqual([]);
    expect(after.review_token).toBe(review.review_token);
    expect(
      await ok(rt, pid, 'process_exit', { review_token: after.review_token, completion_evidence: evidenceFor(after, 'get_current_time') }),
    ).toMatchObject({ status: 'exited' });
  });

  it('[S-R23] evidence that breaks the schema is invalid_arguments: no review, no audit of one, still runnable', async () => {
    const rt = await open();
    const pid = await codingAgent(rt);
    const review = await probe(rt, pid);
    const good = evidenceFor(review, 'list_memory_namespace');
    const check = good.acceptance_checks[0]!;
    const bad: unknown[] = [
      { ...good, acceptance_checks: [] },
      { ...good, final_verification: [] },
      { ...good, acceptance_checks: [{ ...check, source_refs: [] }] },
      { ...good, acceptance_checks: [{ ...check, requirement: ' ' }] },
      { ...good, acceptance_checks: [{ ...check, evidence_summary: '' }] },
      { ...good, acceptance_checks: [{ ...check, status: 'done' }] },
      { ...good, extra: true },
    ];
    for (const completion_evidence of bad) {
      const r = await rt.call(pid, 'process_exit', { review_token: review.review_token, completion_evidence });
      expect(r).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
      expect(!r.ok && r.error.message).toContain('completion_evidence');
    }
    expect(await rt.audit({ pid, action: 'process.exit_review_required' })).toHaveLength(1);
    expect((await rt.process(pid)).status).toBe('runnable');
  });

  it('[S-E10] a one-phase image schema-checks review_token and completion_evidence, then ignores them', async () => {
    const rt = await open();
    const p = await rt.spawn({ goal: 'one phase' });
    const evidence: CompletionEvidence = {
      goal_oid: 'obj_0000000000000000',
      reviewed_message_ids: [],
      acceptance_checks: [{ requirement: 'r', source_refs: ['x'], status: 'completed', evidence_tool_calls: ['y'], evidence_summary: 's' }],
      final_verification: ['y'],
    };
    expect(
      await rt.call(p.pid, 'process_exit', {
        payload: { a: 1 },
        review_token: 'exitrev_x',
        completion_evidence: { ...evidence, extra: 1 },
      }),
    ).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    const out = await ok(rt, p.pid, 'process_exit', { payload: { a: 1 }, review_token: 'exitrev_x', completion_evidence: evidence });
    expect(out).toMatchObject({ status: 'exited' });
    expect(await rt.transaction((scope) => scope.service<ObjectMemoryService>('objects').readPayload(out.result_oid))).toEqual({ a: 1 });
    expect(await rt.audit({ pid: p.pid, action: 'process.exit_review_passed' })).toEqual([]);
  });

  it('[S-R10] more than 1000 human messages fail closed: ok=false, no token', async () => {
    const rt = await open();
    const pid = await codingAgent(rt);
    for (let i = 0; i < 1001; i++) await rt.sendMessage(pid, { i });
    const r = await rt.call(pid, 'process_exit', {});
    expect(r).toMatchObject({ ok: false, error: { code: 'completion_review_invalid' } });
    expect(!r.ok && r.error.message).toContain('more than 1000 human messages');
    expect(JSON.stringify(r)).not.toContain('exitrev_');
    expect((await rt.process(pid)).status).toBe('runnable');
  });

  it('[S-R11] a human post racing the final commit is either rejected as terminal or lands before the review', async () => {
    const rt = await open();
    const pid = await codingAgent(rt);
    await ok(rt, pid, 'list_memory_namespace', {});
    const review = await probe(rt, pid);
    const [exit, post] = await Promise.allSettled([
      rt.call(pid, 'process_exit', {
        review_token: review.review_token,
        completion_evidence: evidenceFor(review, 'list_memory_namespace'),
      }),
      rt.sendMessage(pid, { text: 'one more thing' }),
    ]);
    expect(exit.status).toBe('fulfilled');
    const exitResult = (exit as PromiseFulfilledResult<ToolCallResult>).value;
    const status = (await rt.process(pid)).status;
    if (post.status === 'rejected') {
      expect(post.reason).toMatchObject({ code: 'invalid_state' });
      expect(exitResult).toMatchObject({ ok: true, payload: { status: 'exited' } });
      expect(status).toBe('exited');
    } else {
      const again = reviewOf(exitResult)!;
      expect(again.unread_human_message_ids).toEqual([post.value.messageId]);
      expect(status).toBe('runnable');
    }
  });

  it('[S-B8] in one batch, a gated bare exit runs and the call after it is skipped_after_exclusive', async () => {
    const rt = await open();
    const pid = await codingAgent(rt);
    const report = await rt.run({
      provider: new ScriptedProvider([
        [
          { tool: 'process_exit', args: {} },
          { tool: 'list_memory_namespace', args: {} },
        ],
      ]),
      maxQuanta: 1,
    });
    const q = report.results[0]!;
    expect(q.results).toHaveLength(1);
    expect(q.results[0]).toMatchObject({ ok: true, payload: { status: 'completion_review_required' } });
    expect(await rt.audit({ pid, action: 'llm.action_batch' })).toEqual([
      expect.objectContaining({
        details: expect.objectContaining({ skipped: ['list_memory_namespace'], skipped_reason: 'skipped_after_exclusive' }),
      }),
    ]);
    // R1: a model's review is published as a tool_result Object in its view; the process stays live.
    const published = await rt.transaction(async (scope) => {
      const objects = scope.service<ObjectMemoryService>('objects');
      const roots = await objects.viewRoots(pid);
      const described = await Promise.all(roots.map((r) => objects.inspect(r.oid)));
      const result = described.find((o) => o?.name === `tool_result:${q.results[0]!.call_id}`);
      return result ? objects.readPayload(result.oid) : null;
    });
    expect(published).toMatchObject({
      tool: 'process_exit',
      payload: { status: 'completion_review_required', completion_review: { review_token: expect.stringMatching(/^exitrev_/) } },
    });
    expect((await rt.process(pid)).status).toBe('runnable');
  });

  it(`[S-R13] [S-R17] after a reopen the goal payload is gone: ok=false naming checkpoint and successor, no token, no goal from an acked \
follow-up`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'libos-exit-review-'));
    dirs.push(dir);
    const path = join(dir, 'libos.db');
    const rt1 = await open(path);
    const pid = await codingAgent(rt1, 'Original goal text.');
    const before = await probe(rt1, pid);
    await rt1.sendMessage(pid, { text: 'FOLLOW-UP: pretend this is the goal' });
    await ok(rt1, pid, 'read_process_messages', {});
    await rt1.close();
    runtimes.splice(runtimes.indexOf(rt1), 1);

    const rt2 = await open(path);
    const r = await rt2.call(pid, 'process_exit', {});
    expect(r).toMatchObject({
      ok: false,
      error: { code: 'completion_review_invalid', details: { field: 'goal', goal_oid: before.goal.oid } },
    });
    const message = !r.ok ? r.error.message : '';
    expect(message).toContain('checkpoint');
    expect(message).toContain('successor goal');
    expect(JSON.stringify(r)).not.toContain('exitrev_');
    expect(JSON.stringify(r)).not.toContain('FOLLOW-UP');
    expect(JSON.stringify(r)).not.toContain('Original goal text');
    expect((await rt2.process(pid)).status).not.toBe('exited');
  });
});
