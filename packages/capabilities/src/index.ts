export { createAuthorityEngine } from './engine.js';
export type { AuthorityEngine, AuthorityCheckOptions, EngineAuthority, ApprovalBinding } from './engine.js';
export type { CapabilityRecord, CapabilityStatus, IssueSpec, DelegationSpec, DecisionPolicy } from './capability-record.js';
export { DEFAULT_MAX_DEPTH } from './capability-record.js';
export {
  parseResource,
  canonicalResource,
  covers,
  overlaps,
  resourceSpecificity,
  RESOURCE_KIND_PATTERN,
  RESOURCE_MAX_LENGTH,
} from './resource.js';
export type { ParsedResource } from './resource.js';
export { parseRights, parseRight, MAX_RIGHTS } from './rights.js';
export { parseExpiry, isExpired } from './expiry.js';
export {
  ConstraintRegistry,
  BUILTIN_CONSTRAINTS,
  CONSTRAINTS_MAX_BYTES,
  approvalBindingConstraint,
  authorityRulesConstraint,
  dataReleaseBindingConstraint,
  shellPolicyLevelConstraint,
} from './constraints.js';
export type { ConstraintEvaluator, ConstraintContext, ConstraintOutcome, ConstraintResult } from './constraints.js';
export { verdictOf, combineVerdicts, compareCandidates, policyOf } from './decision.js';
export type { AuthorityDecision, Verdict, CandidateVerdict } from './decision.js';
export { checkAttenuation, specCovers } from './delegation.js';
export type { AttenuatedShape } from './delegation.js';
export { DEFAULT_ROOT_LIMITS } from './budgets.js';
export type { BudgetEngine, BudgetLimits, OverageOutcome } from './budgets.js';
export {
  parseLabels,
  completeLabels,
  assertModelLabels,
  assertNotMintingGrant,
  deriveObjectLabels,
  UNCLASSIFIED_EXTERNAL_LABELS,
} from './data-labels.js';
export type { ProcessFlow } from './flow.js';
export { checkEgress, matchSinkRule, validateSinkRules, DEFAULT_SINK_RULES, UNMATCHED_SINK_RULE } from './egress.js';
export type { SinkRule, SinkTrust, EgressDecision } from './egress.js';
export { CAPABILITY_MIGRATIONS } from './migrations.js';
export { CAPABILITY_SERVICE_NAME, createCapabilityService } from './service.js';
export type { CapabilityService } from './service.js';
export type {
  AuthorityCheck,
  BindOptions,
  DeclassifyReceipt,
  DeriveRequest,
  DuplicationResult,
  EgressRequest,
  PermissionAnswer,
} from './engine-requests.js';
export { capabilities, AUTHORITY_TOOLS } from './plugin.js';
export { listCapabilities } from './tools/list-capabilities.js';
export { requestPermission } from './tools/request-permission.js';
export { delegateCapability } from './tools/delegate-capability.js';
export { revokeCapability } from './tools/revoke-capability.js';
export { capabilities as default } from './plugin.js';
export {
  parseManifest,
  manifestSchema,
  manifestSpec,
  manifestCeiling,
  effectPermitted,
  manifestActive,
  assertChildManifest,
  manifestBudget,
  receivePermitted,
} from './manifest.js';
export type { AuthorityManifest, ManifestCapability, ParsedManifest } from './manifest.js';
export { assertRequestable, permissionEffect, PRIVILEGED_RIGHTS } from './permission-requests.js';
export type { PermissionDecision } from './permission-requests.js';
