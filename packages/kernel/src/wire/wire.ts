// The one casing boundary of libOS. TypeScript APIs (`Runtime`'s return types) are camelCase; the wire (the HTTP API,
// its SSE stream, the CLI's `--json`) is snake_case, like the tool payloads a model sees. Each record type that
// crosses has one explicit mapper each way here. Only field names are renamed: what a record carries as data (audit
// `details`, event `data`, message payloads, wait states, outcomes, capability constraints, Object metadata, budget
// counters keyed by budget field) is opaque and keeps its keys.
import type { CapabilityRecord } from '@libos/capabilities';
import type { HumanRequest } from '@libos/sdk';
import type { AuditRecord, RuntimeEvent } from '../events/event-bus.js';
import type { QuantumResult } from '../executor/run-quantum.js';
import type { LlmCallRecord } from '../executor/llm-calls.js';
import type { ProcessMessage } from '../mailbox/messages.js';
import type { LoadedSkill, ProcessInfo } from '../processes/process-record.js';
import type { BudgetReport, LoadedPluginInfo, MessageInfo, SkillCatalogEntry, ToolSchema } from '../runtime.js';
import type { RunReport } from '../scheduler/run-until-idle.js';

const mapValues = <A, B>(o: Readonly<Record<string, A>>, f: (a: A) => B): Record<string, B> =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

/** A process on the wire (`GET /api/processes`, `libos ps --json`). */
export function processToWire(p: ProcessInfo) {
  return {
    pid: p.pid,
    parent_pid: p.parentPid,
    image_id: p.imageId,
    status: p.status,
    wait_state: p.waitState,
    outcome: p.outcome,
    state_generation: p.stateGeneration,
    revision: p.revision,
    goal: p.goal,
    goal_oid: p.goalOid,
    tool_table: p.toolTable,
    loaded_skills: mapValues(p.loadedSkills, (s) => ({ package_sha256: s.packageSha256, tools: s.tools })),
    visible_tools: p.visibleTools,
    working_directory: p.workingDirectory,
    llm_profile_id: p.llmProfileId,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  };
}
export type ProcessWire = ReturnType<typeof processToWire>;

export function processFromWire(w: ProcessWire): ProcessInfo {
  return {
    pid: w.pid,
    parentPid: w.parent_pid,
    imageId: w.image_id,
    status: w.status,
    waitState: w.wait_state,
    outcome: w.outcome,
    stateGeneration: w.state_generation,
    revision: w.revision,
    goal: w.goal,
    goalOid: w.goal_oid,
    toolTable: w.tool_table,
    loadedSkills: mapValues(w.loaded_skills, (s): LoadedSkill => ({ packageSha256: s.package_sha256, tools: s.tools })),
    visibleTools: w.visible_tools,
    workingDirectory: w.working_directory,
    llmProfileId: w.llm_profile_id,
    createdAt: w.created_at,
    updatedAt: w.updated_at,
  };
}

/** A budget report: its keys are budget field names (`tool_calls`, ...), the same on both sides. */
export function budgetToWire(b: BudgetReport) {
  return { limits: b.limits, usage: b.usage, remaining: b.remaining };
}
export type BudgetWire = ReturnType<typeof budgetToWire>;

export function budgetFromWire(w: BudgetWire): BudgetReport {
  return { limits: w.limits, usage: w.usage, remaining: w.remaining };
}

/** A process with its budget (`GET /api/processes/:pid`, `libos show --json`). */
export function processDetailToWire(p: ProcessInfo, budget: BudgetReport) {
  return { ...processToWire(p), budget: budgetToWire(budget) };
}

export function auditToWire(r: AuditRecord) {
  return {
    seq: r.seq,
    id: r.id,
    ts: r.ts,
    actor: r.actor,
    action: r.action,
    target: r.target,
    decision: r.decision,
    call_id: r.callId,
    details: r.details,
  };
}
export type AuditWire = ReturnType<typeof auditToWire>;

export function auditFromWire(w: AuditWire): AuditRecord {
  const { call_id, ...same } = w;
  return { ...same, callId: call_id };
}

export function eventToWire(e: RuntimeEvent) {
  return { seq: e.seq, id: e.id, ts: e.ts, pid: e.pid, type: e.type, data: e.data };
}
export type EventWire = ReturnType<typeof eventToWire>;

export function eventFromWire(w: EventWire): RuntimeEvent {
  return { seq: w.seq, id: w.id, ts: w.ts, pid: w.pid, type: w.type, data: w.data };
}

export function llmCallToWire(r: LlmCallRecord) {
  return {
    id: r.id,
    pid: r.pid,
    image_id: r.imageId,
    purpose: r.purpose,
    status: r.status,
    provider: r.provider,
    model: r.model,
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    total_tokens: r.totalTokens,
    input_estimate_tokens: r.inputEstimateTokens,
    latency_ms: r.latencyMs,
    error: r.error,
    created_at: r.createdAt,
    request: r.request,
    response: r.response,
  };
}
export type LlmCallWire = ReturnType<typeof llmCallToWire>;

export function llmCallFromWire(w: LlmCallWire): LlmCallRecord {
  return {
    id: w.id,
    pid: w.pid,
    imageId: w.image_id,
    purpose: w.purpose,
    status: w.status,
    provider: w.provider,
    model: w.model,
    promptTokens: w.prompt_tokens,
    completionTokens: w.completion_tokens,
    totalTokens: w.total_tokens,
    inputEstimateTokens: w.input_estimate_tokens,
    latencyMs: w.latency_ms,
    error: w.error,
    createdAt: w.created_at,
    request: w.request,
    response: w.response,
  };
}

/** A message on the wire: the shape `read_messages` shows a model (`ProcessMessage`). */
export function messageToWire(m: MessageInfo): ProcessMessage {
  return {
    message_id: m.messageId,
    sender: m.sender,
    recipient_pid: m.recipientPid,
    channel: m.channel,
    kind: m.kind,
    delivery: m.delivery,
    subject: m.subject,
    body: m.body,
    correlation_id: m.correlationId,
    reply_to: m.replyTo,
    payload: m.payload,
    status: m.status,
    created_at: m.createdAt,
    acked_at: m.ackedAt,
  };
}
export type MessageWire = ProcessMessage;

/** A message as the Runtime returns it, from the wire or tool-payload shape. */
export function messageFromWire(w: MessageWire): MessageInfo {
  return {
    messageId: w.message_id,
    sender: w.sender,
    recipientPid: w.recipient_pid,
    channel: w.channel,
    kind: w.kind,
    delivery: w.delivery,
    subject: w.subject,
    body: w.body,
    correlationId: w.correlation_id,
    replyTo: w.reply_to,
    payload: w.payload,
    status: w.status,
    createdAt: w.created_at,
    ackedAt: w.acked_at,
  };
}

export function humanRequestToWire(r: HumanRequest) {
  return {
    id: r.id,
    pid: r.pid,
    kind: r.kind,
    prompt: r.prompt,
    status: r.status,
    details: r.details,
    response: r.response,
    created_at: r.createdAt,
    answered_at: r.answeredAt,
  };
}
export type HumanRequestWire = ReturnType<typeof humanRequestToWire>;

export function humanRequestFromWire(w: HumanRequestWire): HumanRequest {
  const { created_at, answered_at, ...same } = w;
  return { ...same, createdAt: created_at, answeredAt: answered_at };
}

export function capabilityToWire(c: CapabilityRecord) {
  return {
    id: c.id,
    subject: c.subject,
    resource: c.resource,
    rights: c.rights,
    effect: c.effect,
    issuer: c.issuer,
    issuer_cap_id: c.issuerCapId,
    parent_cap_id: c.parentCapId,
    depth: c.depth,
    max_depth: c.maxDepth,
    issued_at: c.issuedAt,
    expires_at: c.expiresAt,
    uses_remaining: c.usesRemaining,
    status: c.status,
    revoke_cause: c.revokeCause,
    delegable: c.delegable,
    revocable: c.revocable,
    constraints: c.constraints,
    metadata: c.metadata,
  };
}
export type CapabilityWire = ReturnType<typeof capabilityToWire>;

export function capabilityFromWire(w: CapabilityWire): CapabilityRecord {
  return {
    id: w.id,
    subject: w.subject,
    resource: w.resource,
    rights: w.rights,
    effect: w.effect,
    issuer: w.issuer,
    issuerCapId: w.issuer_cap_id,
    parentCapId: w.parent_cap_id,
    depth: w.depth,
    maxDepth: w.max_depth,
    issuedAt: w.issued_at,
    expiresAt: w.expires_at,
    usesRemaining: w.uses_remaining,
    status: w.status,
    revokeCause: w.revoke_cause,
    delegable: w.delegable,
    revocable: w.revocable,
    constraints: w.constraints,
    metadata: w.metadata,
  };
}

export function skillToWire(s: SkillCatalogEntry) {
  return {
    skill_id: s.skillId,
    description: s.description,
    tools: s.tools,
    plugin: s.plugin,
    package_sha256: s.packageSha256,
    path: s.path,
  };
}
export type SkillWire = ReturnType<typeof skillToWire>;

export function skillFromWire(w: SkillWire): SkillCatalogEntry {
  return {
    skillId: w.skill_id,
    description: w.description,
    tools: w.tools,
    plugin: w.plugin,
    packageSha256: w.package_sha256,
    path: w.path,
  };
}

/** A tool as a model sees it; `input_schema` is a JSON Schema (opaque). */
export function toolSchemaToWire(t: ToolSchema) {
  return { name: t.name, description: t.description, input_schema: t.inputSchema };
}

export function pluginToWire(p: LoadedPluginInfo) {
  return { name: p.name, version: p.version, origin: p.origin, spec: p.spec, file: p.file, skills: p.skills, tools: p.tools };
}

/** One quantum of a run; its tool results are already tool payloads (snake_case envelopes). */
export function quantumToWire(q: QuantumResult) {
  return {
    pid: q.pid,
    kind: q.kind,
    ...(q.error ? { error: q.error } : {}),
    ...(q.stopReason ? { stop_reason: q.stopReason } : {}),
    executed: q.executed,
    skipped: q.skipped,
    results: q.results,
  };
}

/** A scheduler run's report (`POST /api/scheduler/run`, `libos run --json`). */
export function runReportToWire(r: RunReport) {
  return { quanta: r.quanta, idle: r.idle, results: r.results.map(quantumToWire) };
}

/** The listed fields of an Object (`objects.listObjects`); its metadata, labels and provenance are payload-shaped already. */
export interface ObjectMetaInput {
  readonly oid: string;
  readonly namespace: string;
  readonly name: string;
  readonly type: string;
  readonly version: number;
  readonly immutable: boolean;
  readonly metadata: unknown;
  readonly labels: unknown;
  readonly provenance: unknown;
  readonly ownerKind: string;
  readonly ownerId: string;
  readonly lifecycle: string;
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly payloadAvailable: boolean;
}

/** Object metadata on the wire (`GET /api/objects`, `libos objects --json`); never a payload. */
export function objectMetaToWire(o: ObjectMetaInput) {
  return {
    oid: o.oid,
    namespace: o.namespace,
    name: o.name,
    type: o.type,
    version: o.version,
    immutable: o.immutable,
    metadata: o.metadata as Readonly<Record<string, unknown>>,
    labels: o.labels as Readonly<Record<string, unknown>>,
    provenance: o.provenance as Readonly<Record<string, unknown>>,
    owner_kind: o.ownerKind,
    owner_id: o.ownerId,
    lifecycle: o.lifecycle,
    created_by: o.createdBy,
    created_at: o.createdAt,
    updated_at: o.updatedAt,
    payload_available: o.payloadAvailable,
  };
}
export type ObjectMetaWire = ReturnType<typeof objectMetaToWire>;

export function objectMetaFromWire(w: ObjectMetaWire): ObjectMetaInput & { readonly labels: Readonly<Record<string, unknown>> } {
  return {
    oid: w.oid,
    namespace: w.namespace,
    name: w.name,
    type: w.type,
    version: w.version,
    immutable: w.immutable,
    metadata: w.metadata,
    labels: w.labels,
    provenance: w.provenance,
    ownerKind: w.owner_kind,
    ownerId: w.owner_id,
    lifecycle: w.lifecycle,
    createdBy: w.created_by,
    createdAt: w.created_at,
    updatedAt: w.updated_at,
    payloadAvailable: w.payload_available,
  };
}
