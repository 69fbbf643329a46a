import type { Context } from 'hono';
import type { Runtime } from '@libos/kernel';
import { canonicalJson, LibosError, sha256Hex, type ErrorPayload } from '@libos/sdk';
import { resources } from '@libos/sdk';

/**
 * The one confirmation policy of the server: which operations are high-risk, how each surface confirms them, and
 * the refusal (audited as `gui.confirmation_required`) an unconfirmed one gets. REST, MCP and the web console all
 * ask `checkConfirmation` before they run anything.
 */

/** Tools whose call ends, replaces or kills a process. */
const HIGH_RISK_TOOLS = new Set(['process_exit', 'exec_process']);
const KILL_SIGNALS = new Set(['cancel', 'terminate']);

/** Tools that are high-risk for some arguments (MCP lists the confirmation argument on these). */
const CONFIRMABLE_TOOLS: ReadonlySet<string> = new Set([...HIGH_RISK_TOOLS, 'signal_child_process']);

/** The tools/call argument an MCP client sets to `true` to confirm; stripped before the broker sees the call. */
export const MCP_CONFIRM_ARG = '_confirmed';

/** Where an operation comes from; each surface confirms its own way. */
export type ConfirmationSurface = 'http' | 'mcp';

const CONFIRM_WITH: Readonly<Record<ConfirmationSurface, { readonly field: string; readonly how: string }>> = {
  http: { field: 'confirmed', how: 'repeat the request with "confirmed": true' },
  mcp: { field: MCP_CONFIRM_ARG, how: `repeat the tools/call with the argument "${MCP_CONFIRM_ARG}": true` },
};

/** True when a broker call of `tool` with `args` is high-risk (exit, exec, a child cancel/terminate). */
export function isHighRiskCall(tool: string, args: unknown): boolean {
  if (HIGH_RISK_TOOLS.has(tool)) return true;
  if (tool !== 'signal_child_process' || typeof args !== 'object' || args === null) return false;
  return KILL_SIGNALS.has(String((args as { signal?: unknown }).signal));
}

/** Rights that act on authority itself: holding one lets a process hand out, take back or approve grants. */
const META_RIGHTS: ReadonlySet<string> = new Set(['grant', 'revoke', 'approve', 'admin']);

/**
 * True when a grant is high-risk: an `allow` of a meta right (grant, revoke, approve, admin), or on a wildcard (`*`)
 * or meta resource (`capability:`, `data_release:`, `declassification:`). Deny and ask grants never are.
 */
export function isHighRiskGrant(resource: string, rights: readonly string[], effect: string): boolean {
  if (effect !== 'allow') return false;
  return rights.some((r) => META_RIGHTS.has(r)) || resource.includes('*') || /^(capability|data_release|declassification):/.test(resource);
}

/** True when a host signal is high-risk (cancel or terminate). */
export function isHighRiskSignal(signal: string): boolean {
  return KILL_SIGNALS.has(signal);
}

/** An operation about to run on a process, as one surface received it. */
export type ConfirmableOperation = {
  readonly via: ConfirmationSurface;
  readonly pid: string;
  /** True only when the caller confirmed explicitly (`confirmed: true`, or `_confirmed: true` over MCP). */
  readonly confirmed: boolean;
} & (
  | { readonly tool: string; readonly args: Readonly<Record<string, unknown>> }
  | { readonly signal: string; readonly reason?: string }
  | { readonly grant: { readonly resource: string; readonly rights: readonly string[]; readonly effect: string } }
);

/** The answer to an unconfirmed high-risk operation: the REST 409 body, the MCP `isError` text. */
export interface ConfirmationRequired {
  readonly confirmation_required: true;
  /** What would run, e.g. `tool:process_exit` or `signal:terminate`. */
  readonly action: string;
  /** What the caller sent (echoed back to it; the audit keeps only a digest of `args`). */
  readonly preview: Readonly<Record<string, unknown>>;
  /** `conflict`; its message and `details.confirm_with` name how this surface confirms. */
  readonly error: ErrorPayload;
}

/**
 * The gate every surface passes before it runs an operation: `undefined` when it may run (not high-risk, or
 * confirmed), else the refusal, already recorded as `gui.confirmation_required` in the audit trail (arguments as
 * sha256 + size only). Nothing else changes; the caller repeats the operation confirmed.
 */
export async function checkConfirmation(rt: Runtime, op: ConfirmableOperation): Promise<ConfirmationRequired | undefined> {
  if (op.confirmed) return undefined;
  const isCall = 'tool' in op;
  if ('grant' in op) {
    if (!isHighRiskGrant(op.grant.resource, op.grant.rights, op.grant.effect)) return undefined;
  } else if (isCall ? !isHighRiskCall(op.tool, op.args) : !isHighRiskSignal(op.signal)) return undefined;
  const action = 'grant' in op ? `grant:${op.grant.resource}` : isCall ? resources.tool(op.tool) : `signal:${op.signal}`;
  const preview =
    'grant' in op
      ? { pid: op.pid, ...op.grant }
      : isCall
        ? { pid: op.pid, tool: op.tool, args: op.args }
        : { pid: op.pid, signal: op.signal, ...(op.reason ? { reason: op.reason } : {}) };
  const argsJson = canonicalJson('grant' in op ? op.grant : isCall ? op.args : null);
  await rt.record({
    audit: {
      action: 'gui.confirmation_required',
      target: resources.process(op.pid),
      decision: 'confirmation_required',
      details: { via: op.via, action, pid: op.pid, args_sha256: sha256Hex(argsJson), args_bytes: Buffer.byteLength(argsJson) },
    },
  });
  const confirm = CONFIRM_WITH[op.via];
  const error = new LibosError('conflict', `${action} on ${op.pid} is high-risk: ${confirm.how}`, {
    details: { confirmation_required: true, action, confirm_with: { [confirm.field]: true } },
  });
  return { confirmation_required: true, action, preview, error: error.toJSON() };
}

/** REST: runs the gate and answers 409 with the refusal (typed, for the client), or `undefined` when the operation may run. */
export async function refuseUnconfirmed(c: Context, rt: Runtime, op: ConfirmableOperation) {
  const refusal = await checkConfirmation(rt, op);
  return refusal && c.json(refusal, 409);
}

/**
 * MCP: splits the confirmation argument off tools/call arguments. `_confirmed` must be a boolean when present
 * (else `invalid_arguments` naming it); it never reaches the broker, whatever the tool.
 */
export function takeMcpConfirmation(args: Readonly<Record<string, unknown>>): { args: Record<string, unknown>; confirmed: boolean } {
  const { [MCP_CONFIRM_ARG]: flag, ...rest } = args;
  if (flag !== undefined && typeof flag !== 'boolean') {
    const message = `${MCP_CONFIRM_ARG}: must be a boolean (got ${typeof flag})`;
    throw new LibosError('invalid_arguments', message, { details: { field: MCP_CONFIRM_ARG } });
  }
  return { args: rest, confirmed: flag === true };
}

const MCP_CONFIRM_PROPERTY = {
  type: 'boolean',
  description: 'true confirms a high-risk call (exit, exec, a child cancel/terminate); without it the call is refused and nothing runs',
} as const;

/** A tool's input JSON Schema as MCP `tools/list` shows it: the confirmable tools also list `_confirmed`. */
export function confirmableInputSchema(tool: string, schema: Readonly<Record<string, unknown>>): Record<string, unknown> {
  if (!CONFIRMABLE_TOOLS.has(tool)) return { ...schema };
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  return { ...schema, properties: { ...properties, [MCP_CONFIRM_ARG]: MCP_CONFIRM_PROPERTY } };
}
