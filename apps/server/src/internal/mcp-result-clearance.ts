import { MCP_CLIENT_SINK, type Runtime, type ToolCallResult } from '@libos/kernel';
import { isLibosError } from '@libos/sdk';

/**
 * A tools/call result leaves the runtime for an external MCP client (sink `mcp:client`, unmatched by default:
 * untrusted, normal data at most). It is handed over only when the process's flow labels are cleared for that sink
 * (the kernel's one clearance, `rt.clearSink`); otherwise the call stands (its effects are committed) but the client
 * gets the `egress_denied` error in place of the result.
 */
export async function clearForMcpClient(rt: Runtime, pid: string, r: ToolCallResult): Promise<ToolCallResult> {
  try {
    await rt.clearSink(pid, MCP_CLIENT_SINK);
    return r;
  } catch (err) {
    if (!(isLibosError(err) && err.code === 'egress_denied')) throw err;
    return { ok: false, call_id: r.call_id, tool: r.tool, error: err.toJSON() };
  }
}
