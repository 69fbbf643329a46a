import { expect, it } from 'vitest';
import { completionEvidenceSchema } from './completion-evidence.js';

const check = {
  requirement: 'write the ledger',
  source_refs: ['obj_1'],
  status: 'completed',
  evidence_tool_calls: ['create_memory_object'],
  evidence_summary: 'ledger holds 3 entries',
};
const valid = { goal_oid: 'obj_1', reviewed_message_ids: [], acceptance_checks: [check], final_verification: ['read_memory_object'] };

it('accepts the seed shape, including a blocked check that cites no tool', () => {
  expect(completionEvidenceSchema.safeParse(valid).success).toBe(true);
  expect(
    completionEvidenceSchema.safeParse({ ...valid, acceptance_checks: [{ ...check, status: 'blocked', evidence_tool_calls: [] }] }).success,
  ).toBe(true);
});

it.each([
  ['no acceptance checks', { ...valid, acceptance_checks: [] }, 'acceptance_checks'],
  ['no final verification', { ...valid, final_verification: [] }, 'final_verification'],
  ['a check without source refs', { ...valid, acceptance_checks: [{ ...check, source_refs: [] }] }, 'acceptance_checks.0.source_refs'],
  ['a blank requirement', { ...valid, acceptance_checks: [{ ...check, requirement: '  ' }] }, 'acceptance_checks.0.requirement'],
  [
    'a blank evidence summary',
    { ...valid, acceptance_checks: [{ ...check, evidence_summary: '' }] },
    'acceptance_checks.0.evidence_summary',
  ],
  ['an unknown status', { ...valid, acceptance_checks: [{ ...check, status: 'done' }] }, 'acceptance_checks.0.status'],
  ['an extra key on the evidence', { ...valid, notes: 'x' }, ''],
  ['an extra key on a check', { ...valid, acceptance_checks: [{ ...check, confidence: 1 }] }, 'acceptance_checks.0'],
  ['a missing goal_oid', { reviewed_message_ids: [], acceptance_checks: [check], final_verification: ['x'] }, 'goal_oid'],
])('refuses %s, naming the field', (_name, value, path) => {
  const r = completionEvidenceSchema.safeParse(value);
  expect(r.success).toBe(false);
  expect(r.error!.issues.map((i) => i.path.join('.'))).toContain(path);
});
