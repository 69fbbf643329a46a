import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { defineTool, z, type ToolContext } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { auditedWrite } from '../internal/audited-write.js';
import { fsError, refuse } from '../internal/errors.js';
import { fsResource, requireFs } from '../internal/fs-access.js';
import { checkText, MAX_PATH_CHARS } from '../internal/path-text.js';
import { resolvePath } from '../internal/resolve-path.js';

/** Largest content one write_file call takes, in characters. */
export const MAX_WRITE_CHARS = 1_000_000;

/**
 * Makes the missing directories above `real` (write on each is required first, so a grant on the file alone does
 * not create directories). Returns the directories it made, outermost first.
 */
async function makeParents(ctx: ToolContext, real: string): Promise<string[]> {
  const missing: string[] = [];
  for (let dir = dirname(real); ; dir = dirname(dir)) {
    const r = resolvePath('/', dir, { followFinal: true, field: 'path' });
    if (r.kind === 'directory') break;
    if (r.kind !== null)
      throw refuse('invalid_arguments', 'not_a_directory', `path: ${dir} exists and is not a directory`, { field: 'path', path: dir });
    missing.unshift(dir);
    if (dir === dirname(dir)) break;
  }
  for (const dir of missing) await ctx.authority.require(fsResource(dir), 'write');
  for (const dir of missing) {
    try {
      mkdirSync(dir);
    } catch (err) {
      throw fsError(err, dir, 'path');
    }
    await ctx.audit.record({ action: 'workspace.directory.create', target: fsResource(dir), decision: 'ok', details: { path: dir } });
  }
  return missing;
}

/**
 * `write_file`: creates or replaces a UTF-8 text file atomically (temporary file, then rename). `mode` says whether it
 * may create, overwrite, or both. Needs `write` on `fs:<real path>`; every write is audited with the path, bytes and
 * sha256 before and after.
 */
export const writeFile = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'write_file',
    description:
      'Create or replace a UTF-8 text file atomically. mode: create_or_overwrite (default), create (fails if it exists) or overwrite ' +
      '(fails if missing). create_parents makes missing directories. Files inside .git are refused. Needs write on fs:<absolute ' +
      'path>.',
    input: z.object({
      path: z.string().min(1).max(MAX_PATH_CHARS).describe('file path, relative to your working directory or absolute'),
      content: z.string().max(MAX_WRITE_CHARS).describe(`the whole new content, at most ${MAX_WRITE_CHARS} characters`),
      mode: z.enum(['create_or_overwrite', 'create', 'overwrite']).default('create_or_overwrite'),
      create_parents: z.boolean().default(false).describe('make missing parent directories (each needs write)'),
    }),
    policy: { sideEffects: true },
    async run(args, ctx) {
      checkText('content', args.content);
      const p = await requireFs(ctx, cfg.baseDirectory, args.path, ['write'], { field: 'path', refuseGitMetadata: true });
      const d = { field: 'path', path: p.real };
      if (p.kind === 'directory') throw refuse('invalid_arguments', 'is_directory', `path: ${p.real} is a directory, not a file`, d);
      if (p.kind !== null && p.kind !== 'file')
        throw refuse('invalid_arguments', 'not_a_regular_file', `path: ${p.real} is not a regular file`, d);
      if (p.kind === 'file' && args.mode === 'create')
        throw refuse('conflict', 'already_exists', `path: ${p.real} already exists (mode create)`, d);
      if (p.kind === null && args.mode === 'overwrite')
        throw refuse('not_found', 'not_found', `path: ${p.real} does not exist (mode overwrite)`, d);
      if (!args.create_parents) {
        const parent = resolvePath('/', dirname(p.real), { followFinal: true, field: 'path' });
        if (parent.kind !== 'directory') {
          throw refuse(
            parent.kind === null ? 'not_found' : 'invalid_arguments',
            parent.kind === null ? 'not_found' : 'not_a_directory',
            `path: the parent ${parent.real} of ${p.real} ` +
              (parent.kind === null ? 'does not exist (pass create_parents: true)' : 'is not a directory'),
            d,
          );
        }
      }
      const made = args.create_parents ? await makeParents(ctx, p.real) : [];
      const data = Buffer.from(args.content, 'utf8');
      const receipt = await auditedWrite(ctx, p, data, 'workspace.file.write', { made_directories: made });
      return { ...receipt, made_directories: made };
    },
  });
