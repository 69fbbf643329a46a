import { defineTool, SERVICE_NAMES, z, type HumanService } from '@libos/sdk';
import { resources } from '@libos/sdk';

/** Upper bound on one message to a human (the kernel's bound on a human output's text). */
export const MAX_HUMAN_OUTPUT_CHARS = 8_000;

/**
 * `human_output`: a message from the calling process to a human operator. Needs write on `human:<human>`; the text
 * leaves only if everything the process has observed is cleared for the sink `human:<human>:output`. Delivery is one
 * durable `human_output` event (what `libos events` and the server's SSE show) plus a `human.output` audit. Nothing
 * waits for a reply: to ask, use `ask_human`.
 */
export const humanOutput = defineTool({
  name: 'human_output',
  description:
    'Send a message to a human operator (default "owner"): a report, progress or a warning. Needs write on ' +
    'human:<human>. Nothing waits for a reply (ask_human asks a question). The human must be cleared for what you ' +
    'have read, else egress_denied and nothing is sent.',
  input: z.object({
    message: z
      .string()
      .min(1)
      .max(MAX_HUMAN_OUTPUT_CHARS)
      .refine((m) => m.trim().length > 0, { error: 'must not be blank' })
      .describe('the text the human reads'),
    human: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]*$/)
      .max(64)
      .default('owner')
      .describe('the recipient: human:<human>'),
    kind: z.enum(['info', 'progress', 'result', 'warning']).default('info').describe('how the operator should read it'),
  }),
  output: z.object({
    output_id: z.string(),
    human: z.string(),
    sink: z.string(),
    chars: z.number(),
    sha256: z.string(),
    delivered_at: z.string(),
  }),
  async run({ message, human, kind }, ctx) {
    await ctx.authority.require(resources.human(human), 'write');
    const labels = await ctx.flow.labels();
    return ctx.service<HumanService>(SERVICE_NAMES.human).output(ctx.pid, { human, text: message, kind, labels });
  },
});
