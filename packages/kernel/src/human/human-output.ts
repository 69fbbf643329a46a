import { createHash } from 'node:crypto';
import { joinLabels, LibosError, type HumanOutputInput, type HumanOutputReceipt, type ServiceScope } from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { clearSink, humanSink } from '../sinks/clear-sink.js';
import { resources } from '@libos/sdk';

/** Upper bound on one human output's text. */
export const MAX_HUMAN_OUTPUT_CHARS = 8_000;

/** Names a human may have (the `<id>` of `human:<id>`). */
export const HUMAN_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** The channel of every human output sink: `human:<id>:output`. */
export const HUMAN_OUTPUT_CHANNEL = 'output';

/**
 * Delivers a process's message to a human operator in the caller's transaction. The text leaves only if the pid's
 * flow labels clear the sink `human:<human>:output` (else `egress_denied`, nothing emitted); then one durable
 * `human_output` event carries it (what `libos events` and the server's SSE show the operator), and the
 * `human.output` audit records its size and hash. Authority (`human:<human>` write) is the caller's to check.
 *
 * @example
 * declare const deps: KernelDeps;
 * await deliverHumanOutput(deps, scope, pid, { human: 'owner', text: 'Build is green.' });
 */
export async function deliverHumanOutput(
  deps: KernelDeps,
  scope: ServiceScope,
  pid: string,
  out: HumanOutputInput,
): Promise<HumanOutputReceipt> {
  if (!HUMAN_NAME_PATTERN.test(out.human)) {
    const message = `human: must match ${HUMAN_NAME_PATTERN} (got ${JSON.stringify(out.human)})`;
    throw new LibosError('invalid_arguments', message, { details: { field: 'human' } });
  }
  if (out.text.trim() === '') throw new LibosError('invalid_arguments', 'text: must not be blank', { details: { field: 'text' } });
  if (out.text.length > MAX_HUMAN_OUTPUT_CHARS) {
    const message = `text: must be at most ${MAX_HUMAN_OUTPUT_CHARS} characters (got ${out.text.length})`;
    throw new LibosError('invalid_arguments', message, { details: { field: 'text' } });
  }
  const sink = humanSink(out.human, HUMAN_OUTPUT_CHANNEL);
  const sha256 = createHash('sha256').update(out.text, 'utf8').digest('hex');
  // What the text carries is everything the process observed (its high-water), plus anything the caller adds.
  const highWater = await deps.engine.flow(scope, pid).labels();
  const labels = out.labels ? joinLabels([highWater, out.labels]) : highWater;
  await clearSink(deps.engine, scope, pid, sink, { labels, field: 'text', payloadSha256: sha256 });
  const receipt: HumanOutputReceipt = {
    output_id: deps.ids.next('hout'),
    human: out.human,
    sink,
    chars: out.text.length,
    sha256,
    delivered_at: scope.clock.now().toISOString(),
  };
  const kind = out.kind ?? 'info';
  await scope.events.emit('human_output', { pid, output_id: receipt.output_id, human: out.human, kind, text: out.text });
  await scope.audit.record({
    action: 'human.output',
    target: resources.human(out.human),
    decision: 'delivered',
    details: { pid, output_id: receipt.output_id, sink, kind, chars: receipt.chars, sha256 },
  });
  return receipt;
}
