import { resolve } from 'node:path';
import { WORKING_DIRECTORY_SERVICE, type ToolContext, type WorkingDirectoryService } from '@libos/sdk';

/**
 * The calling process's working directory as an absolute path: the text the kernel stores, resolved against the
 * plugin's base directory (a process spawned without one stores `.`, the base itself).
 */
export async function workingDirectoryOf(ctx: ToolContext, baseDirectory: string): Promise<string> {
  const stored = await ctx.service<WorkingDirectoryService>(WORKING_DIRECTORY_SERVICE).get(ctx.pid);
  return resolve(baseDirectory, stored);
}
