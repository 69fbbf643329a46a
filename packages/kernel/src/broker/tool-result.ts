import type { ErrorPayload, WaitSpec } from '@libos/sdk';

/** A notice attached to a result: unread mail the caller should look at. */
export interface ToolNotice {
  readonly kind: 'message_notice';
  readonly unread: number;
  readonly message: string;
}

/**
 * The envelope every tool call returns, whoever the caller (LLM executor, CLI, HTTP, MCP, task runner).
 * `wait` is set when the call parked its process: the saved call resumes when the wait is satisfied.
 *
 * @example
 * const r = await runtime.call(pid, 'list_memory_namespace', {});
 * if (r.ok) console.log(r.payload); else console.error(r.error.code, r.error.message);
 */
export type ToolCallResult =
  | { readonly ok: true; readonly call_id: string; readonly tool: string; readonly payload: unknown; readonly wait?: WaitSpec; readonly notices?: readonly ToolNotice[] }
  | { readonly ok: false; readonly call_id: string; readonly tool: string; readonly error: ErrorPayload };
