import type { ErrorPayload, WaitSpec } from '@libos/sdk';

/** A notice attached after a result: unread normal mail the caller should look at (the oldest ≤ 20 ids named). */
export interface ToolNotice {
  readonly kind: 'message_notice';
  readonly phase: 'after_tool_call';
  readonly unread: number;
  readonly message_ids: readonly string[];
  readonly channels: readonly string[];
  readonly correlation_ids: readonly string[];
  readonly message: string;
}

/**
 * The envelope every tool call returns, whoever the caller (LLM executor, CLI, HTTP, MCP, task runner).
 * `wait` is set when the call parked its process: the saved call resumes when the wait is satisfied.
 *
 * @example
 * const r = await rt.call(pid, 'list_memory_namespace', {});
 * if (r.ok) console.log(r.payload); else console.error(r.error.code, r.error.message);
 */
export type ToolCallResult =
  | {
      readonly ok: true;
      readonly call_id: string;
      readonly tool: string;
      readonly payload: unknown;
      readonly wait?: WaitSpec;
      readonly notices?: readonly ToolNotice[];
    }
  | { readonly ok: false; readonly call_id: string; readonly tool: string; readonly error: ErrorPayload };
