import { defineTool, SERVICE_NAMES, z, type ProcessService } from '@libos/sdk';
import { completionEvidenceSchema } from '../review/completion-evidence.js';
import { gatedExit } from '../review/gated-exit.js';
import { resolveExitResult } from './exit-result.js';
import { idPattern } from '@libos/sdk';

/** Upper bound on the `message` text of an exit. */
export const MAX_EXIT_MESSAGE_CHARS = 32_000;

/**
 * `process_exit`: finishes the calling process. One-phase images exit at once; the terminal state, result identity,
 * event, audit and the parent's wake commit atomically. Irreversible. Images with
 * `metadata.completion_gate = "cumulative_review"` exit only through a completion review (`gatedExit`): a bare call
 * returns `status: "completion_review_required"` and the process stays live.
 */
export const processExit = defineTool({
  name: 'process_exit',
  description:
    'Finish this process. Call it alone, after every write, wait and required output is done. Result precedence: ' +
    'result_oid (an existing readable Object) > payload (becomes a summary Object) > message (becomes {"message": ' +
    '...}) > none. Only status "exited" confirms completion; "completion_review_required" means the process ' +
    'is still live: follow the review.',
  input: z.object({
    result_oid: z.string().regex(idPattern('obj')).optional().describe('an existing Object you can read; overrides payload and message'),
    payload: z.json().optional().describe('structured final summary; becomes a new summary Object'),
    message: z.string().max(MAX_EXIT_MESSAGE_CHARS).optional().describe('internal note; becomes {"message": ...}; not human output'),
    review_token: z.string().max(128).optional().describe('only for review-gated images: the review_token of the newest review'),
    completion_evidence: completionEvidenceSchema.optional().describe('only for review-gated images: evidence for the newest review'),
  }),
  exclusive: true,
  async run(args, ctx) {
    const processes = ctx.service<ProcessService>(SERVICE_NAMES.processes);
    const me = await processes.get(ctx.pid);
    if (me.imageMetadata.completion_gate === 'cumulative_review') return gatedExit(ctx, args);
    const resultOid = await resolveExitResult(ctx, args);
    const receipt = await processes.exit(ctx.pid, { resultOid });
    return { status: receipt.status, pid: ctx.pid, result_oid: receipt.result_oid, state_generation: receipt.state_generation };
  },
});
