import type { ServiceScope, SinkClearance, SinkClearOptions, SinksService } from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { clearSink } from './clear-sink.js';

/**
 * The `sinks` service: `clearSink` for plugins, in the caller's transaction. A plugin tool whose effect sends data
 * out of the runtime (e.g. the arguments of an external MCP server's tool) clears it here first, like the kernel's
 * own sinks; a refusal is `egress_denied` and the tool sends nothing.
 *
 * @example
 * await scope.service<SinksService>(SERVICE_NAMES.sinks).clear(pid, 'mcp:weather/forecast', { field: 'arguments' });
 */
export function sinksService(deps: () => KernelDeps, scope: ServiceScope): SinksService {
  return {
    async clear(pid: string, sink: string, opts: SinkClearOptions = {}): Promise<SinkClearance> {
      const d = await clearSink(deps().engine, scope, pid, sink, opts);
      return {
        sink: d.sink,
        decision: 'allow',
        rule: d.rule,
        reason: d.reason,
        labelsSha256: d.labelsSha256,
        ...(d.releaseCapId !== undefined ? { releaseCapId: d.releaseCapId } : {}),
      };
    },
  };
}
