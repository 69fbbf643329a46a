import { defineTool, LibosError, SERVICE_NAMES, z, type ObjectsService, type ProcessService, type ToolContext } from '@libos/sdk';

/** Upper bound on the `message` text of an exit. */
export const MAX_EXIT_MESSAGE_CHARS = 32_000;

/**
 * Resolves the result of an exit by the seed's exact precedence: `result_oid` (an existing Object the caller can
 * read) overrides everything; else `payload` becomes a structured summary Object; else `message` becomes
 * `{"message": ...}`; else the result is null.
 */
async function resolveResult(ctx: ToolContext, args: { result_oid?: string | undefined; payload?: unknown; message?: string | undefined }): Promise<string | null> {
  const hasObjects = () => {
    try {
      return ctx.service<ObjectsService>(SERVICE_NAMES.objects);
    } catch (err) {
      if (err instanceof LibosError && err.code === 'not_found') {
        throw new LibosError('invalid_state', 'process_exit: a result Object needs the Object Memory plugin, which this runtime does not load; exit without payload, message or result_oid', { cause: err });
      }
      throw err;
    }
  };
  if (args.result_oid !== undefined) {
    const objects = hasObjects();
    // Unreadable looks exactly like missing.
    const readable = await ctx.authority.check(`object:${args.result_oid}`, 'read');
    const obj = readable.allowed ? await objects.describe(args.result_oid) : null;
    if (!obj) throw new LibosError('object_not_found', `result_oid: no readable Object ${args.result_oid}`, { details: { result_oid: args.result_oid } });
    await ctx.authority.consume(readable);
    return obj.oid;
  }
  if (args.payload !== undefined) return (await hasObjects().createForProcess(ctx.pid, { type: 'summary', payload: args.payload, immutable: true, metadata: { title: 'final result' }, attachToView: false })).oid;
  if (args.message !== undefined) return (await hasObjects().createForProcess(ctx.pid, { type: 'summary', payload: { message: args.message }, immutable: true, metadata: { title: 'exit message' }, attachToView: false })).oid;
  return null;
}

/**
 * `process_exit`: finishes the calling process. One-phase images exit at once; the terminal state, result identity,
 * event, audit and the parent's wake commit atomically. Irreversible.
 */
export const processExit = defineTool({
  name: 'process_exit',
  description:
    'Finish this process. Call it alone, after every write, wait and required output is done. Result precedence: result_oid (an existing readable Object) > payload (becomes a summary Object) > message (becomes {"message": ...}) > none. Only status "exited" confirms completion.',
  input: z.object({
    result_oid: z.string().regex(/^obj_[0-9a-f]{16}$/).optional().describe('an existing Object you can read; overrides payload and message'),
    payload: z.json().optional().describe('structured final summary; becomes a new summary Object'),
    message: z.string().max(MAX_EXIT_MESSAGE_CHARS).optional().describe('internal note; becomes {"message": ...}; not human output'),
    review_token: z.string().optional().describe('only for review-gated images'),
    completion_evidence: z.record(z.string(), z.unknown()).optional().describe('only for review-gated images'),
  }),
  exclusive: true,
  async run(args, ctx) {
    const processes = ctx.service<ProcessService>(SERVICE_NAMES.processes);
    const me = await processes.get(ctx.pid);
    if (me.imageMetadata.completion_gate === 'cumulative_review') {
      throw new LibosError('invalid_state', `process_exit: image ${me.imageId} gates exit behind a cumulative completion review, which this runtime does not run yet; the process stays live`, {
        details: { image: me.imageId, completion_gate: 'cumulative_review' },
      });
    }
    const resultOid = await resolveResult(ctx, args);
    const receipt = await processes.exit(ctx.pid, { resultOid });
    return { status: receipt.status, pid: ctx.pid, result_oid: receipt.result_oid, state_generation: receipt.state_generation };
  },
});
