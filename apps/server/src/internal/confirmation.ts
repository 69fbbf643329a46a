import type { Context } from 'hono';
import type { Runtime } from '@libos/kernel';
import { canonicalJson, LibosError, sha256Hex } from '@libos/sdk';

/** Tools whose call ends, replaces or kills a process: an HTTP caller must confirm them. */
const HIGH_RISK_TOOLS = new Set(['process_exit', 'exec_process']);
const KILL_SIGNALS = new Set(['cancel', 'terminate']);

/** True when a broker call of `tool` with `args` is high-risk (exit, exec, a child cancel/terminate). */
export function isHighRiskCall(tool: string, args: unknown): boolean {
  if (HIGH_RISK_TOOLS.has(tool)) return true;
  if (tool !== 'signal_child_process' || typeof args !== 'object' || args === null) return false;
  return KILL_SIGNALS.has(String((args as { signal?: unknown }).signal));
}

/** True when a host signal is high-risk (cancel or terminate). */
export function isHighRiskSignal(signal: string): boolean {
  return KILL_SIGNALS.has(signal);
}

export interface ConfirmationRequest {
  /** What would run, e.g. `tool:process_exit` or `signal:terminate`. */
  readonly action: string;
  /** The process it would act on. */
  readonly pid: string;
  /** What the caller sent (echoed back to it; the audit keeps only a digest of `args`). */
  readonly preview: Readonly<Record<string, unknown>>;
}

/**
 * The refusal of an unconfirmed high-risk operation: records `gui.confirmation_required` in the audit trail
 * (arguments as sha256 + size only), then answers 409 with `{confirmation_required, action, preview, error}`.
 * Nothing else changes; the caller repeats the request with `confirmed: true`.
 */
export async function refuseUnconfirmed(c: Context, rt: Runtime, req: ConfirmationRequest): Promise<Response> {
  const argsJson = canonicalJson(req.preview.args ?? null);
  await rt.transaction((scope) =>
    scope.audit.record({
      action: 'gui.confirmation_required',
      target: `process:${req.pid}`,
      decision: 'confirmation_required',
      details: { via: 'http', action: req.action, pid: req.pid, args_sha256: sha256Hex(argsJson), args_bytes: Buffer.byteLength(argsJson) },
    }),
  );
  const error = new LibosError('conflict', `${req.action} on ${req.pid} is high-risk: repeat the request with "confirmed": true`, { details: { confirmation_required: true, action: req.action } });
  return c.json({ confirmation_required: true, action: req.action, preview: req.preview, error: error.toJSON() }, 409);
}
