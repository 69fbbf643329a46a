import { describe, expect, it } from 'vitest';
import type { CompletionEvidence } from './completion-evidence.js';
import { goalReference } from './review-references.js';
import { validateCompletion, type ValidationState } from './validate-evidence.js';

const GOAL = 'obj_00000000000000a1';
const TOKEN = 'exitrev_current';

function state(over: Partial<ValidationState> = {}): ValidationState {
  return {
    reviewToken: TOKEN,
    goal: { oid: GOAL, version: 1, payloadSha256: 'x', source: 'object_memory', reference: goalReference('process:pid_1', 'goal') },
    ackedIds: ['msg_1'],
    unreadIds: [],
    expectedSourceRefs: [GOAL, 'msg_1'],
    observedTools: ['list_memory_namespace', 'create_memory_object'],
    hints: [],
    ...over,
  };
}

function evidence(over: Partial<CompletionEvidence> = {}): CompletionEvidence {
  return {
    goal_oid: GOAL,
    reviewed_message_ids: ['msg_1'],
    acceptance_checks: [
      {
        requirement: 'the goal deliverable',
        source_refs: [GOAL],
        status: 'completed',
        evidence_tool_calls: ['create_memory_object'],
        evidence_summary: 'created the ledger',
      },
      {
        requirement: 'the human follow-up',
        source_refs: ['msg_1'],
        status: 'blocked',
        evidence_tool_calls: [],
        evidence_summary: 'no shell tool in this runtime',
      },
    ],
    final_verification: ['list_memory_namespace'],
    ...over,
  };
}

describe('validateCompletion', () => {
  it('passes the current token with evidence that covers every ref with observed tools', () => {
    expect(validateCompletion(state(), TOKEN, evidence())).toEqual([]);
  });

  it('reports every phrase of the spec, in the spec order', () => {
    const errors = validateCompletion(state({ unreadIds: ['msg_2'], hints: ['git_diff'] }), 'exitrev_stale', {
      goal_oid: 'obj_00000000000000ff',
      reviewed_message_ids: ['msg_1', 'msg_1'],
      acceptance_checks: [
        { requirement: 'a', source_refs: ['x'], status: 'completed', evidence_tool_calls: [], evidence_summary: 's' },
        { requirement: 'b', source_refs: [GOAL], status: 'blocked', evidence_tool_calls: ['run_shell'], evidence_summary: 'reason' },
      ],
      final_verification: ['process_exit'],
    });
    const phrases = [
      'read and acknowledge every unread human message',
      'review_token is missing or stale',
      'completion_evidence.goal_oid',
      'completion_evidence.reviewed_message_ids',
      'explicit goal requirements still need successful tool calls: git_diff',
      'acceptance_checks[0].source_refs contains unknown references: x',
      'acceptance_checks[0].evidence_tool_calls must cite evidence for completed work',
      'acceptance_checks[1].evidence_tool_calls cites unobserved tools: run_shell',
      'acceptance checks do not cover every expected_source_ref: msg_1',
      'completion_evidence.final_verification cites unobserved tools: process_exit',
    ];
    expect(errors).toHaveLength(phrases.length);
    for (const [i, e] of errors.entries()) expect(e).toContain(phrases[i]);
    expect(errors[0]).toContain('msg_2');
  });

  it('without evidence stops after "completion_evidence must be a structured object"', () => {
    expect(validateCompletion(state(), undefined, undefined)).toEqual([
      expect.stringContaining('review_token is missing or stale'),
      expect.stringContaining('completion_evidence must be a structured object'),
    ]);
    expect(validateCompletion(state({ unreadIds: ['msg_2'] }), TOKEN, undefined)).toEqual([
      expect.stringContaining('read and acknowledge every unread human message'),
      expect.stringContaining('completion_evidence must be a structured object'),
    ]);
  });

  it('a stale token with otherwise valid evidence gives only the stale-token error', () => {
    expect(validateCompletion(state(), 'exitrev_old', evidence())).toEqual([expect.stringContaining('review_token is missing or stale')]);
  });

  it('reviewed_message_ids must be the acked set exactly: a missing, an extra or a duplicated id fails', () => {
    for (const ids of [[], ['msg_1', 'msg_9'], ['msg_1', 'msg_1'], ['msg_9']]) {
      expect(validateCompletion(state(), TOKEN, evidence({ reviewed_message_ids: ids }))).toEqual([
        expect.stringContaining('completion_evidence.reviewed_message_ids must list exactly the 1 acknowledged_human_message_ids'),
      ]);
    }
    const none = state({ ackedIds: [], expectedSourceRefs: [GOAL] });
    const onlyGoal = evidence({ reviewed_message_ids: [], acceptance_checks: [evidence().acceptance_checks[0]!] });
    expect(validateCompletion(none, TOKEN, onlyGoal)).toEqual([]);
  });

  it('a blocked or cancelled check may cite no tool but never an unobserved one, nor a call id', () => {
    const checks = (status: 'blocked' | 'cancelled', tools: string[]) =>
      evidence({
        acceptance_checks: [
          { ...evidence().acceptance_checks[0]! },
          { requirement: 'r', source_refs: ['msg_1'], status, evidence_tool_calls: tools, evidence_summary: 'exact reason' },
        ],
      });
    expect(validateCompletion(state(), TOKEN, checks('cancelled', []))).toEqual([]);
    expect(validateCompletion(state(), TOKEN, checks('blocked', ['call_0001']))).toEqual([
      expect.stringContaining('acceptance_checks[1].evidence_tool_calls cites unobserved tools: call_0001'),
    ]);
  });
});
