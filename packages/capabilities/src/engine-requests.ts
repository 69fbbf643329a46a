// The shapes the authority engine's methods take and return (`AuthorityEngine` in engine.ts), declared here so they
// are public while the implementations stay in internal/.
import type { DataLabels, Right } from '@libos/sdk';
import type { CapabilityRecord, DelegationSpec } from './capability-record.js';
import type { ConstraintContext } from './constraints.js';

/** Inputs of `deriveAuthority`. */
export interface DeriveRequest {
  /** The pid whose grants are the parents. */
  readonly source: string;
  /** The pid that receives the derived records. */
  readonly target: string;
  readonly specs: readonly DelegationSpec[];
  /** Optional ceiling: every spec must be `specCovers`-admitted by one of these. */
  readonly ceiling?: readonly DelegationSpec[];
  /** Why (e.g. `spawn`, `task_runner`, `fork`); recorded in the audit. */
  readonly kind: string;
}

/** What a duplicating transition did. */
export interface DuplicationResult {
  readonly copied: readonly CapabilityRecord[];
  /** Finite records, never duplicated. */
  readonly droppedFinite: readonly string[];
  /** Allow records that lost rights (or all of them) to an overlapping deny/ask. */
  readonly narrowed: readonly { readonly capId: string; readonly droppedRights: readonly string[] }[];
}

/** One (resource, right) an effect needs, with the request facts it was decided under. */
export interface AuthorityCheck {
  readonly resource: string;
  readonly right: Right;
  readonly ctx?: Omit<ConstraintContext, 'subject'>;
}

export interface BindOptions {
  /** The parent process: its manifest (if any) must cover this one. */
  readonly parentPid?: string | null;
  /** Image `required_capabilities`: recorded in the audit, never granted. */
  readonly imageRequirements?: readonly { readonly resource: string; readonly rights: readonly string[] }[];
}

export interface PermissionAnswer {
  readonly approved: boolean;
  readonly decision?: string;
  readonly responder: string;
}

export interface EgressRequest {
  readonly sink: string;
  /** Labels of the data; default: the pid's high-water. */
  readonly labels?: DataLabels;
  /** sha256 of the payload, to find and spend a bound release. */
  readonly payloadSha256?: string;
  readonly sinkIdentitySha256?: string;
}

/** What a declassification did (the object store applies object labels; process labels are applied here). */
export interface DeclassifyReceipt {
  readonly target: string;
  readonly resource: string;
  readonly labels: DataLabels;
  readonly capId: string;
}
