import type { Effect, GrantSpec, Right } from '@libos/sdk';

/** Lifecycle status of a stored grant. `revoked` covers both explicit revocation and exhausted uses. */
export type CapabilityStatus = 'active' | 'revoked' | 'disabled';

/**
 * One stored grant: `subject` may use `rights` on `resource` with `effect`.
 * Records are immutable values; delegation and attenuation return new records.
 */
export interface CapabilityRecord {
  readonly id: string;
  readonly subject: string;
  readonly resource: string;
  readonly rights: readonly Right[];
  readonly effect: Effect;
  /** Attribution only (`host`, a pid, `human:owner`); never authorizes. */
  readonly issuer: string;
  /** The `grant`/`admin` record that authorized a checked issue, or the parent of a delegation. */
  readonly issuerCapId: string | null;
  /** The record this one was derived from; its whole chain must stay active and unexpired. */
  readonly parentCapId: string | null;
  readonly depth: number;
  readonly maxDepth: number | null;
  readonly issuedAt: string;
  readonly expiresAt: string | null;
  /** Finite uses left; null = unlimited. */
  readonly usesRemaining: number | null;
  readonly status: CapabilityStatus;
  readonly revokeCause: 'explicit' | 'exhausted' | null;
  readonly delegable: boolean;
  readonly revocable: boolean;
  readonly constraints: Readonly<Record<string, unknown>>;
  /** Opaque strings; never authorize. */
  readonly metadata: Readonly<Record<string, string>>;
}

/** What the host may issue: a `GrantSpec` plus `revocable` (default true). */
export interface IssueSpec extends GrantSpec {
  readonly revocable?: boolean;
}

/** A grant spec without a subject: what a delegation or inheritance asks for. */
export type DelegationSpec = Omit<GrantSpec, 'subject'> & { readonly subject?: string };

/** Default maximum delegation depth when a root grant sets none. */
export const DEFAULT_MAX_DEPTH = 4;

/** The policy name of a decision: allow_once for a finite allow, none when no grant matched. */
export type DecisionPolicy = 'always_allow' | 'allow_once' | 'ask_each_time' | 'always_deny' | 'none';
