import { mkdirSync } from 'node:fs';
import { defineTool, z } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { fsError, refuse } from '../internal/errors.js';
import { fsResource, requireFs } from '../internal/fs-access.js';
import { MAX_PATH_CHARS } from '../internal/path-text.js';

/**
 * `make_directory`: creates a directory (with its missing parents unless `parents: false`); an existing directory is
 * not an error (`created: false`). Needs `write` on `fs:<real path>`.
 */
export const makeDirectory = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'make_directory',
    description:
      'Create a directory, with missing parents unless parents is false. An existing directory is fine (created: false). Needs write ' +
      'on fs:<absolute path>.',
    input: z.object({
      path: z.string().min(1).max(MAX_PATH_CHARS),
      parents: z.boolean().default(true),
    }),
    policy: { sideEffects: true, idempotent: true },
    async run(args, ctx) {
      const p = await requireFs(ctx, cfg.baseDirectory, args.path, ['write'], { field: 'path', refuseGitMetadata: true });
      if (p.kind === 'directory') return { path: p.real, created: false };
      if (p.kind !== null)
        throw refuse('conflict', 'already_exists', `path: ${p.real} already exists and is not a directory`, {
          field: 'path',
          path: p.real,
        });
      try {
        mkdirSync(p.real, { recursive: args.parents });
      } catch (err) {
        throw fsError(err, p.real, 'path');
      }
      await ctx.audit.record({
        action: 'workspace.directory.create',
        target: fsResource(p.real),
        decision: 'ok',
        details: { path: p.real, requested: p.requested, parents: args.parents },
      });
      return { path: p.real, created: true };
    },
  });
