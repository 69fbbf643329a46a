import {
  LibosError,
  randomIds,
  type Authority,
  type CheckOptions,
  type Clock,
  type DataLabels,
  type Decision,
  type GrantSpec,
  type IdSource,
  type Migration,
  type OwnershipResolver,
  type RequireOptions,
  type Right,
  type ServiceScope,
  type SubtreeStateContributor,
} from '@libos/sdk';
import { budgetEngine, type BudgetEngine } from './budgets.js';
import type { CapabilityRecord, DelegationSpec, IssueSpec } from './capability-record.js';
import { BUILTIN_CONSTRAINTS, ConstraintRegistry, type ConstraintEvaluator } from './constraints.js';
import type { AuthorityDecision } from './decision.js';
import type { EgressDecision, SinkRule } from './egress.js';
import { processFlow, type ProcessFlow } from './flow.js';
import { authorizeIn, auditDecision, decideAmong, spendDecision, type AuthorizeContext } from './internal/authorize.js';
import {
  declassifyImpl,
  egressImpl,
  loadSinkRegistry,
  releaseBinding,
  setSinkRulesImpl,
  type DeclassifyReceipt,
  type EgressRequest,
} from './internal/data-flow.js';
import type { EngineEnv } from './internal/env.js';
import { delegateImpl, deriveImpl, planDerive, type DeriveRequest } from './internal/delegate.js';
import { issueCheckedImpl, issueTrustedImpl } from './internal/issue.js';
import { listImpl } from './internal/list-grants.js';
import { revokeImpl, revokeTrustedImpl } from './internal/revoke.js';
import { authorizeHandleImpl } from './internal/handles.js';
import { withAuthorityImpl, type AuthorityCheck } from './internal/authority-transaction.js';
import { duplicateAuthorityImpl, type DuplicationResult } from './internal/transitions.js';
import { ownerResolvers } from './internal/owner-grants.js';
import { getRecord } from './internal/record-lookup.js';
import { commitReservationImpl, recoverReservationsImpl, reserveImpl, restoreReservationImpl } from './internal/reservations.js';
import { dbOf } from './internal/store.js';
import { CAPABILITY_MIGRATIONS } from './migrations.js';
import type { ParsedManifest } from './manifest.js';
import {
  applyPermissionDecisionImpl,
  checkPermissionRequestImpl,
  latestPermissionRequestImpl,
  recordPermissionRequestImpl,
  type PermissionAnswer,
} from './internal/permissions.js';
import { bindManifestImpl, effectPermittedImpl, manifestOfImpl, type BindOptions } from './internal/manifests.js';
import { parseResource } from './resource.js';
import { parseRight } from './rights.js';
import { createCapabilityService, type CapabilityService } from './service.js';
import { capabilityState } from './internal/subtree-state.js';

/** `CheckOptions` plus the request facts rules and bound approvals look at. */
export interface AuthorityCheckOptions extends CheckOptions {
  readonly effectId?: string;
  readonly targetStateVersion?: string | number;
  readonly argv?: readonly string[];
  readonly fields?: Readonly<Record<string, string | number | boolean | null>>;
}

/** The sdk `Authority`, returning full decisions. */
export interface EngineAuthority extends Authority {
  check(resource: string, right: Right, opts?: AuthorityCheckOptions): Promise<AuthorityDecision>;
  require(resource: string, right: Right, opts?: RequireOptions & AuthorityCheckOptions): Promise<AuthorityDecision>;
}

/** A one-shot approval for exact arguments (what a human's per-use "approve" installs). */
export interface ApprovalBinding {
  readonly canonicalArgsHash: string;
  readonly effectId?: string;
  readonly targetStateVersion?: string | number;
}

/** The authority engine. Stateless: every method works in the transaction of the scope it is given. */
export interface AuthorityEngine {
  /**
   * Kysely migrations for the tables this package owns (grants, reservations, budget accounts and envelopes, process labels, sink
   * registry).
   */
  readonly migrations: readonly Migration[];
  /**
   * The sdk Authority of `pid` in one store transaction. `require()` audits the decision, throws unless allowed
   * (`approval_required` for ask, else `opts.code` or `permission_denied`) and spends a finite use in the
   * transaction, so a rollback restores it.
   */
  authority(scope: ServiceScope, pid: string): EngineAuthority;
  /** Decides without auditing or spending. */
  authorize(scope: ServiceScope, subject: string, resource: string, right: Right, ctx?: AuthorityCheckOptions): Promise<AuthorityDecision>;
  /** Decides among given records; records of any other subject are ignored (CAP-12). */
  authorizeWithCandidates(
    scope: ServiceScope,
    subject: string,
    resource: string,
    right: Right,
    records: readonly CapabilityRecord[],
    ctx?: AuthorityCheckOptions,
  ): Promise<AuthorityDecision>;
  /** Authorizes through a named handle: that exact record must be live and covering, and nothing may deny. */
  authorizeHandle(
    scope: ServiceScope,
    pid: string,
    capId: string,
    resource: string,
    right: Right,
    ctx?: AuthorityCheckOptions,
  ): Promise<AuthorityDecision>;
  /** Fork / checkpoint restore: copies the source's live records to the target, minus finite ones and deny/ask-overlapped rights. */
  duplicateAuthority(scope: ServiceScope, source: string, target: string, kind: 'fork' | 'checkpoint_restore'): Promise<DuplicationResult>;
  /**
   * Host-only, unchecked issue (bootstrap, CLI `libos grant`, human decisions, tests). Audited + event `capability.granted`.
   * With `spec.ownership` it only records (audit + event) the owner's implicit record and stores nothing.
   */
  issueTrusted(scope: ServiceScope, spec: IssueSpec, issuer: string): Promise<CapabilityRecord>;
  /** Checked issue by a pid: covering `admin` ⇒ any effect; covering `grant` ⇒ transfer of a held unlimited allow. */
  issue(scope: ServiceScope, actor: string, spec: IssueSpec): Promise<CapabilityRecord>;
  /** Installs a one-use allow bound to exact arguments (per-use approval), issued by `approver`. */
  approveOnce(
    scope: ServiceScope,
    subject: string,
    resource: string,
    right: Right,
    binding: ApprovalBinding,
    approver: string,
  ): Promise<CapabilityRecord>;
  /** One record by id (stored, or an implicit owner record `cap_own:<resource>`), or null. */
  get(scope: ServiceScope, capId: string): Promise<CapabilityRecord | null>;
  /** Grants held by subject, implicit owner records included; by default only active + chain-valid + unexpired ones. */
  list(scope: ServiceScope, subject: string, opts?: { includeInactive?: boolean }): Promise<CapabilityRecord[]>;
  /** Checked revoke (docs/behaviour/capabilities.md). actor is a pid or the string 'host'. */
  revoke(scope: ServiceScope, actor: string, capId: string): Promise<void>;
  /** Host revoke that also removes non-revocable records. */
  revokeTrusted(scope: ServiceScope, capId: string, reason: string): Promise<void>;
  /** Delegates one record to `childSubject`; the child only narrows it. */
  delegate(scope: ServiceScope, parentCapId: string, childSubject: string, spec: DelegationSpec, actor: string): Promise<CapabilityRecord>;
  /** Validates every spec, then publishes all records and one audit; nothing is written when any spec fails. */
  deriveAuthority(scope: ServiceScope, req: DeriveRequest): Promise<CapabilityRecord[]>;
  /** Validates `inherit_capabilities` specs as delegations from `parentPid` without writing (before the child exists). */
  preflightInherit(
    scope: ServiceScope,
    parentPid: string,
    specs: readonly DelegationSpec[],
  ): Promise<readonly { readonly parentCapId: string; readonly resource: string; readonly rights: readonly Right[] }[]>;
  /** Derives exactly `specs` from the parent's grants into the child (kind `spawn`). */
  inheritForSpawn(scope: ServiceScope, parentPid: string, childPid: string, specs: readonly DelegationSpec[]): Promise<CapabilityRecord[]>;
  /**
   * AuthorityTransaction: re-authorizes every check in this transaction, reserves each finite record once,
   * runs `fn`, then commits the reservations; any throw rolls the caller's transaction back.
   */
  withAuthority<T>(
    scope: ServiceScope,
    pid: string,
    checks: readonly AuthorityCheck[],
    fn: (decisions: readonly AuthorityDecision[]) => Promise<T>,
  ): Promise<T>;
  /** Reserves the finite use a decision selected; null when the grant is unlimited. */
  reserve(scope: ServiceScope, decision: Decision): Promise<string | null>;
  /** reserved → committed; false when it was not reserved any more. */
  commitReservation(scope: ServiceScope, reservationId: string): Promise<boolean>;
  /** reserved → restored (use given back); undefined when not restorable. */
  restoreReservation(scope: ServiceScope, reservationId: string): Promise<number | undefined>;
  /** Reopen: unproven reserved uses become abandoned (stay spent). Returns how many. */
  recoverReservations(scope: ServiceScope): Promise<number>;
  /** Budgets of the process tree (sdk Budgets + account management). */
  budgets(scope: ServiceScope): BudgetEngine;
  /** Per-process data-flow labels (high-water that never goes down) for one call. */
  flow(scope: ServiceScope, pid: string): ProcessFlow;
  /** Sink clearance for data `pid` sends (labels default to its high-water); spends a matching bound release. */
  egress(
    scope: ServiceScope,
    pid: string,
    req: EgressRequest,
  ): Promise<EgressDecision & { readonly releaseCapId?: string; readonly generation: number }>;
  /** The sink registry in force (defaults until replaced) and its generation. */
  sinkRules(scope: ServiceScope): Promise<{ rules: readonly SinkRule[]; generation: number }>;
  /** Replaces the sink registry (`admin` on `data_flow_sink_registry:*`, or 'host'); returns the new generation. */
  setSinkRules(scope: ServiceScope, actor: string, rules: readonly SinkRule[]): Promise<number>;
  /** The constraint value binding a one-shot `data_release:<sink>` approval to exact facts. */
  releaseBinding(pid: string, sink: string, labels: DataLabels, payloadSha256: string, generation: number): Record<string, string | number>;
  /** Declassify/endorse through `admin` on `declassification:object:<oid>` (or `:process:<pid>`, applied here). */
  declassify(
    scope: ServiceScope,
    actorPid: string,
    target: string,
    newLabels: Partial<DataLabels>,
    opts?: { current?: DataLabels },
  ): Promise<DeclassifyReceipt>;
  /** Binds a Task Authority Manifest to a pid (once) and compiles its authorized capabilities; a child's must narrow its parent's. */
  bindManifest(
    scope: ServiceScope,
    pid: string,
    manifest: unknown,
    opts?: BindOptions,
  ): Promise<{ manifest: ParsedManifest; records: CapabilityRecord[] }>;
  /** The manifest bound to a pid, or null. */
  manifestOf(scope: ServiceScope, pid: string): Promise<ParsedManifest | null>;
  /** Whether a provider effect (e.g. `filesystem.write`) is permitted for the pid by its manifest (none ⇒ unrestricted). */
  effectPermitted(scope: ServiceScope, pid: string, effect: string): Promise<boolean>;
  /** Pre-prompt gates of a standing permission request (canonical input, model limits, manifest ceiling). */
  checkPermissionRequest(
    scope: ServiceScope,
    pid: string,
    resource: string,
    rights: readonly string[],
  ): Promise<{ readonly resource: string; readonly rights: readonly Right[] }>;
  /** Installs a human's answer to a permission request as one record (idempotent per request id). */
  applyPermissionDecision(
    scope: ServiceScope,
    req: { readonly requestId: string; readonly pid: string; readonly resource: string; readonly rights: readonly string[] },
    answer: PermissionAnswer,
  ): Promise<CapabilityRecord>;
  /** Remembers the human request a pid's permission request waits on. */
  recordPermissionRequest(
    scope: ServiceScope,
    pid: string,
    requestId: string,
    resource: string,
    rights: readonly string[],
    human: string,
  ): Promise<void>;
  /** The latest permission request of a pid, or null. */
  latestPermissionRequest(
    scope: ServiceScope,
    pid: string,
  ): Promise<{ readonly requestId: string; readonly resource: string; readonly rights: readonly string[]; readonly human: string } | null>;
  /** The `capabilities` service the authority tools use (register as `scope.service('capabilities')`). */
  service(scope: ServiceScope): CapabilityService;
  /** The engine's share of checkpoints: grants, budget accounts, labels and manifests of a process subtree. */
  readonly subtreeState: SubtreeStateContributor;
}

function ctxOf(opts: AuthorityCheckOptions | undefined): AuthorizeContext {
  if (!opts) return {};
  const out: { -readonly [K in keyof AuthorizeContext]: AuthorizeContext[K] } = {};
  if (opts.operation !== undefined) out.operation = opts.operation;
  if (opts.argsHash !== undefined) out.argsHash = opts.argsHash;
  if (opts.effectId !== undefined) out.effectId = opts.effectId;
  if (opts.targetStateVersion !== undefined) out.targetStateVersion = opts.targetStateVersion;
  if (opts.argv !== undefined) out.argv = opts.argv;
  if (opts.fields !== undefined) out.fields = opts.fields;
  return out;
}

class PidAuthority implements EngineAuthority {
  constructor(
    private readonly env: EngineEnv,
    private readonly scope: ServiceScope,
    readonly pid: string,
  ) {}

  check(resource: string, right: Right, opts?: AuthorityCheckOptions): Promise<AuthorityDecision> {
    return authorizeIn(this.env, dbOf(this.scope), this.pid, resource, right, ctxOf(opts));
  }

  async require(resource: string, right: Right, opts: RequireOptions & AuthorityCheckOptions = {}): Promise<AuthorityDecision> {
    const d = await this.check(resource, right, opts);
    await auditDecision(this.scope, d);
    if (!d.allowed) {
      const details = {
        resource: d.resource,
        right: d.right,
        effect: d.effect,
        policy: d.policy,
        selectedId: d.selectedId ?? null,
        matchedIds: d.matchedIds,
      };
      if (d.effect === 'ask') {
        throw new LibosError(
          'approval_required',
          opts.message ?? `${this.pid} needs a human approval to ${right} ${d.resource} (${d.reason})`,
          { details: { ...details, argsHash: opts.argsHash ?? null } },
        );
      }
      throw new LibosError(opts.code ?? 'permission_denied', opts.message ?? `${this.pid} may not ${right} ${d.resource}: ${d.reason}`, {
        details,
      });
    }
    if (opts.consume !== false) await spendDecision(this.env, this.scope, dbOf(this.scope), this.pid, d);
    return d;
  }

  async consume(decision: Decision): Promise<void> {
    await spendDecision(this.env, this.scope, dbOf(this.scope), this.pid, decision);
  }

  async grantTrusted(spec: GrantSpec): Promise<string> {
    return (await issueTrustedImpl(this.env, this.scope, spec, this.pid)).id;
  }
}

/**
 * Creates the authority engine. Inject the clock (expiry, timestamps) and ids (`cap_…`, `res_…`, `bres_…`);
 * extend the constraint registry with `constraints`; `owners` are the plugins' ownership resolvers (an owner's
 * rights on what it owns are implicit `cap_own:<resource>` records, never one stored grant per resource).
 *
 * @example
 * import { systemClock } from '@libos/sdk';
 * const engine = createAuthorityEngine({ clock: systemClock });
 * // In a store transaction's service scope (the kernel hands one to every tool and service):
 * await engine.issueTrusted(scope, { subject: pid, resource: 'object:*', rights: ['read'] }, 'host');
 * await engine.authority(scope, pid).require('object:obj_1', 'read');
 */
export function createAuthorityEngine(opts: {
  clock: Clock;
  ids?: IdSource;
  constraints?: readonly ConstraintEvaluator[];
  owners?: readonly OwnershipResolver[];
}): AuthorityEngine {
  const env: EngineEnv = {
    clock: opts.clock,
    ids: opts.ids ?? randomIds,
    registry: new ConstraintRegistry([...BUILTIN_CONSTRAINTS, ...(opts.constraints ?? [])]),
    owners: ownerResolvers(opts.owners),
  };
  const engine: AuthorityEngine = {
    migrations: CAPABILITY_MIGRATIONS,
    authority: (scope, pid) => new PidAuthority(env, scope, pid),
    authorize: (scope, subject, resource, right, ctx) => authorizeIn(env, dbOf(scope), subject, resource, right, ctxOf(ctx)),
    authorizeWithCandidates: (scope, subject, resource, right, records, ctx) =>
      decideAmong(env, dbOf(scope), subject, parseResource(resource), parseRight(right), records, ctxOf(ctx)),
    authorizeHandle: (scope, pid, capId, resource, right, ctx) => authorizeHandleImpl(env, scope, pid, capId, resource, right, ctxOf(ctx)),
    duplicateAuthority: (scope, source, target, kind) => duplicateAuthorityImpl(env, scope, source, target, kind),
    issueTrusted: (scope, spec, issuer) => issueTrustedImpl(env, scope, spec, issuer),
    issue: (scope, actor, spec) => issueCheckedImpl(env, scope, actor, spec),
    approveOnce: (scope, subject, resource, right, binding, approver) =>
      issueTrustedImpl(
        env,
        scope,
        { subject, resource, rights: [right], effect: 'allow', usesRemaining: 1, constraints: { approval_binding: { ...binding } } },
        approver,
      ),
    get: (scope, capId) => getRecord(env.owners, dbOf(scope), capId),
    list: (scope, subject, o) => listImpl(env, scope, subject, o?.includeInactive === true),
    revoke: (scope, actor, capId) => revokeImpl(env, scope, actor, capId),
    revokeTrusted: (scope, capId, reason) => revokeTrustedImpl(env, scope, capId, reason),
    delegate: (scope, parentCapId, childSubject, spec, actor) => delegateImpl(env, scope, parentCapId, childSubject, spec, actor),
    deriveAuthority: (scope, req) => deriveImpl(env, scope, req),
    preflightInherit: async (scope, parentPid, specs) => {
      const plan = await planDerive(env, dbOf(scope), parentPid, `${parentPid}:inherit-preflight`, specs);
      return plan.items.map((i) =>
        Object.freeze({ parentCapId: i.parent.id, resource: i.draft.resource.canonical, rights: i.draft.rights }),
      );
    },
    inheritForSpawn: (scope, parentPid, childPid, specs) =>
      deriveImpl(env, scope, { source: parentPid, target: childPid, specs, kind: 'spawn' }),
    withAuthority: (scope, pid, checks, fn) => withAuthorityImpl(env, scope, pid, checks, fn),
    reserve: (scope, decision) => reserveImpl(env, scope, decision),
    commitReservation: (scope, id) => commitReservationImpl(env, scope, id),
    restoreReservation: (scope, id) => restoreReservationImpl(env, scope, id),
    recoverReservations: (scope) => recoverReservationsImpl(env, scope),
    budgets: (scope) => budgetEngine(env, scope),
    flow: (scope, pid) => processFlow(env, scope, pid),
    egress: (scope, pid, req) => egressImpl(env, scope, pid, req),
    sinkRules: (scope) => loadSinkRegistry(dbOf(scope)),
    setSinkRules: (scope, actor, rules) => setSinkRulesImpl(env, scope, actor, rules),
    releaseBinding,
    declassify: (scope, actorPid, target, newLabels, o) => declassifyImpl(env, scope, actorPid, target, newLabels, o ?? {}),
    bindManifest: (scope, pid, manifest, o) => bindManifestImpl(env, scope, pid, manifest, o ?? {}),
    manifestOf: (scope, pid) => manifestOfImpl(dbOf(scope), pid),
    effectPermitted: (scope, pid, effect) => effectPermittedImpl(env, scope, pid, effect),
    checkPermissionRequest: (scope, pid, resource, rights) => checkPermissionRequestImpl(scope, pid, resource, rights),
    applyPermissionDecision: (scope, req, answer) => applyPermissionDecisionImpl(env, scope, req, answer),
    recordPermissionRequest: (scope, pid, requestId, resource, rights, human) =>
      recordPermissionRequestImpl(env, scope, pid, requestId, resource, rights, human),
    latestPermissionRequest: (scope, pid) => latestPermissionRequestImpl(scope, pid),
    service: (scope) => createCapabilityService(engine, scope),
    subtreeState: capabilityState(env),
  };
  return Object.freeze(engine);
}
