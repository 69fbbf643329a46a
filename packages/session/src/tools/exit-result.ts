import { LibosError, SERVICE_NAMES, type DataLabels, type ObjectsService, type ToolContext } from '@libos/sdk';
import { resources } from '@libos/sdk';

/** The result inputs of an exit. */
export interface ExitResultInput {
  readonly result_oid?: string | undefined;
  readonly payload?: unknown;
  readonly message?: string | undefined;
}

/**
 * Resolves the result of an exit by the seed's exact precedence: `result_oid` (an existing Object the caller can
 * read) overrides everything; else `payload` becomes a structured summary Object; else `message` becomes
 * `{"message": ...}`; else the result is null.
 *
 * @example
 * const resultOid = await resolveExitResult(ctx, { payload: { done: true } }); // 'obj_…'
 */
export async function resolveExitResult(ctx: ToolContext, args: ExitResultInput): Promise<string | null> {
  const hasObjects = () => {
    try {
      return ctx.service<ObjectsService>(SERVICE_NAMES.objects);
    } catch (err) {
      if (err instanceof LibosError && err.code === 'not_found') {
        throw new LibosError(
          'invalid_state',
          'process_exit: a result Object needs the Object Memory plugin, which this runtime does not load; exit ' +
            'without payload, message or result_oid',
          { cause: err },
        );
      }
      throw err;
    }
  };
  if (args.result_oid !== undefined) {
    const objects = hasObjects();
    // Unreadable looks exactly like missing.
    const readable = await ctx.authority.check(resources.object(args.result_oid), 'read');
    const obj = readable.allowed ? await objects.describe(args.result_oid) : null;
    if (!obj)
      throw new LibosError('object_not_found', `result_oid: no readable Object ${args.result_oid}`, {
        details: { result_oid: args.result_oid },
      });
    // The parent gets a standing read+materialize handle on the result: a finite read must not turn into one.
    if (readable.consumeId !== undefined) {
      const why = `is readable only through a finite grant (${readable.consumeId}); the parent would get a standing handle on it`;
      const instead = 'exit with an Object you can read without limit, or with a payload';
      throw new LibosError('delegation_denied', `result_oid: ${args.result_oid} ${why}; ${instead}`, {
        details: { result_oid: args.result_oid, capability_id: readable.consumeId },
      });
    }
    return obj.oid;
  }
  if (args.payload === undefined && args.message === undefined) return null;
  const objects = hasObjects();
  const derived = await derivedFrom(ctx);
  const [payload, title] = args.payload !== undefined ? [args.payload, 'final result'] : [{ message: args.message }, 'exit message'];
  const input = { type: 'summary', payload, immutable: true, metadata: { title }, attachToView: false, ...derived };
  return (await objects.createForProcess(ctx.pid, input)).oid;
}

/**
 * A summary is written from everything the process observed: it carries the flow's labels (never below them, so a
 * secret child never hands its parent a normal result) and its provenance names every Object it observed, released
 * since or not (never drop true provenance).
 */
async function derivedFrom(ctx: ToolContext): Promise<{ labels: DataLabels; sourceOids: readonly string[] }> {
  const labels = await ctx.flow.labels(); // loads the process's sources too
  return { labels, sourceOids: ctx.flow.sources() };
}
