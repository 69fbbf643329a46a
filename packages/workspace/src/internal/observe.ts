import type { ToolContext } from '@libos/sdk';

/**
 * Records that the caller read data from outside libOS (file content, command output, repository history): nobody
 * classified it, so it joins the caller's flow as untrusted (sensitivity stays as it was).
 */
export async function observeExternal(ctx: ToolContext): Promise<void> {
  await ctx.flow.taint({ trust_level: 'untrusted' });
}
