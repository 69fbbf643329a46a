import type { LlmToolCall, ToolCallResult } from '@libos/kernel';

/** Names a pid by its role in the story ("parent", "worker"), else the pid itself. */
export type RoleOf = (pid: unknown) => string;

const json = (v: unknown) => JSON.stringify(v);
const str = (v: unknown) => (typeof v === 'string' ? v : json(v));

/** What a call asks for, in words: "activates agent-libos-child-processes", "asks the human \"…\"". */
export function describeCall(call: Pick<LlmToolCall, 'name' | 'arguments'>, role: RoleOf): string {
  const a = call.arguments;
  switch (call.name) {
    case 'activate_skill':
      return `activates ${str(a.skill_id)}`;
    case 'create_memory_namespace':
      return `creates namespace ${str(a.namespace)}`;
    case 'spawn_child_process':
      return 'spawns a worker';
    case 'receive_process_messages':
      return `receives messages from the ${a.sender_pid ? role(a.sender_pid) : 'mailbox'}${a.block ? ' (blocking)' : ''}`;
    case 'send_process_message':
      return `sends ${json(a.payload)} to the ${role(a.to_pid)}`;
    case 'ask_human':
      return `asks the human ${json(a.question)}`;
    case 'wait_child_process':
      return `waits for the ${role(a.child_pid)} to end`;
    case 'process_exit':
      return `exits with ${json(a.payload ?? a.message ?? null)}`;
    default:
      return `calls ${call.name} ${json(a)}`;
  }
}

/** What came back, in words: "ok", "refused <code>", "waits (waiting_human)", or a tool-specific summary. */
export function describeResult(tool: string, r: ToolCallResult, role: RoleOf): string {
  if (!r.ok) return `refused ${r.error.code}`;
  // Named as the kernel names the stop: waiting_<kind> (a sleep is waiting_timer, a task wait waiting_task).
  if (r.wait) return `waits (waiting_${r.wait.kind})`;
  const p = (r.payload ?? {}) as Record<string, unknown>;
  switch (tool) {
    case 'spawn_child_process':
      return `ok: worker ${str(p.pid)}`;
    case 'receive_process_messages': {
      const ms = (p.messages as { sender: string; payload: unknown }[] | undefined) ?? [];
      const each = ms.map((m) => `: from the ${role(m.sender)} ${json(m.payload)}`).join('');
      return `${ms.length} message${ms.length === 1 ? '' : 's'}${each}`;
    }
    case 'ask_human':
      return `answer ${json(p.answer)}`;
    case 'wait_child_process':
      return `the ${role(p.child_pid)} ${str(p.status)}, result ${str(p.result_oid)} now readable`;
    case 'process_exit':
      return `${str(p.status)}, result ${str(p.result_oid)}`;
    default:
      return 'ok';
  }
}
