import type { AuthorityEngine, EgressDecision } from '@libos/capabilities';
import { LibosError, type DataLabels, type ServiceScope } from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { inTransaction } from '../store/transaction.js';
import { resources } from '@libos/sdk';

/** A clearance that let the data go (the engine's decision, payload-free). */
export type SinkClearance = EgressDecision & { readonly releaseCapId?: string; readonly generation: number };

export interface ClearSinkOptions {
  /** Labels of the data; default: the source's flow high-water (everything it has observed). */
  readonly labels?: DataLabels;
  /** The argument or thing that carries the data, named first in the error (e.g. `question`, `to_pid`). */
  readonly field?: string;
  /** sha256 of the exact payload: lets a bound one-shot `data_release:<sink>` release a conditional sink once. */
  readonly payloadSha256?: string;
}

/** Where a question or permission request to a human goes: `human:<recipient>:<channel>`, e.g. `human:owner:question`. */
export const humanSink = (human: string, channel: string): string => resources.human(human, channel);

/** The sink of a result an external MCP client receives (unmatched by default: untrusted, normal data at most). */
export const MCP_CLIENT_SINK = 'mcp:client';

function describeLabels(l: DataLabels): string {
  const who = [l.tenant ? `tenant ${l.tenant}` : null, l.principal ? `principal ${l.principal}` : null].filter(Boolean);
  return who.length ? `${l.sensitivity} (${who.join(', ')})` : l.sensitivity;
}

/**
 * The kernel's one sink clearance: may data with these labels leave `source` (a pid, or a kernel sender such as
 * `object_task:<id>`) for `sink`? It wraps the authority engine's egress (the sink registry, bound releases and the
 * payload-free `data_flow.decision` audit live there, never here) and throws `egress_denied` naming the sink, the
 * labels, the rule and the reason unless the decision is `allow`. Every sink passes here: the prompt
 * (`llm:<provider>`), messages and exit results (`process:<pid>`), task notifications, human requests
 * (`humanSink`), MCP results (`MCP_CLIENT_SINK`). A new sink (human output, files as `filesystem:workspace:<path>`)
 * calls it the same way before its effect, passing `payloadSha256` when a conditional sink may need a release.
 *
 * @example
 * declare const deps: KernelDeps;
 * const labels = await ctx.flow.labels();
 * await clearSink(deps.engine, ctx, ctx.pid, humanSink('stranger', 'question'), { labels, field: 'question' });
 */
export async function clearSink(
  engine: AuthorityEngine,
  scope: ServiceScope,
  source: string,
  sink: string,
  opts: ClearSinkOptions = {},
): Promise<SinkClearance> {
  const labels = opts.labels ?? (await engine.flow(scope, source).labels());
  const release = opts.payloadSha256 !== undefined ? { payloadSha256: opts.payloadSha256 } : {};
  const d = await engine.egress(scope, source, { sink, labels, ...release });
  if (d.decision === 'allow') return d;
  const rule = d.rule ?? 'none (an unmatched sink is untrusted: normal data at most)';
  const what = `${opts.field ?? 'data'}: ${source} may not send ${describeLabels(labels)} data to ${d.sink}`;
  throw new LibosError('egress_denied', `${what}: ${d.reason}; rule ${rule}`, {
    details: {
      ...(opts.field ? { field: opts.field } : {}),
      sink: d.sink,
      decision: d.decision,
      rule: d.rule,
      reason: d.reason,
      labels,
      labels_sha256: d.labelsSha256,
    },
  });
}

/**
 * `clearSink` in a transaction of its own (for sinks outside a tool call: the prompt, a host-delivered result), so
 * the decision's audit record commits even when the clearance refuses; the refusal is thrown after the commit.
 */
export async function clearSinkDurably(
  deps: KernelDeps,
  source: string,
  sink: string,
  opts: ClearSinkOptions = {},
): Promise<SinkClearance> {
  let denied: LibosError | null = null;
  const cleared = await inTransaction(deps.db, deps.scopes, source, null, async (scope) => {
    try {
      return await clearSink(deps.engine, scope, source, sink, opts);
    } catch (err) {
      if (!(err instanceof LibosError && err.code === 'egress_denied')) throw err;
      denied = err;
      return null;
    }
  });
  if (denied) throw denied;
  return cleared!;
}
