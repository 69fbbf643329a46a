import { defineTool, z } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { auditedWrite } from '../internal/audited-write.js';
import { refuse } from '../internal/errors.js';
import { readTextFile } from '../internal/file-io.js';
import { requireFs } from '../internal/fs-access.js';
import { observeExternal } from '../internal/observe.js';
import { checkText, MAX_PATH_CHARS } from '../internal/path-text.js';
import { MAX_WRITE_CHARS } from './write-file.js';

/** Start offsets of every non-overlapping occurrence of `needle` in `hay`. */
export function occurrences(hay: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + needle.length)) out.push(i);
  return out;
}

/** 1-based line number of a character offset. */
const lineAt = (text: string, offset: number) => text.slice(0, offset).split('\n').length;

/**
 * `edit_file`: replaces an exact string in a UTF-8 text file, atomically. `old_text` must occur exactly once unless
 * `replace_all`; an ambiguous or absent match is refused and nothing is written. Needs `read` and `write` on
 * `fs:<real path>`; audited like `write_file`.
 */
export const editFile = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'edit_file',
    description:
      'Replace an exact string in a text file (atomic). old_text must occur exactly once (include surrounding lines to make it ' +
      'unique) unless replace_all is true; otherwise nothing is written. Needs read and write on fs:<absolute path>.',
    input: z.object({
      path: z.string().min(1).max(MAX_PATH_CHARS),
      old_text: z.string().min(1).max(MAX_WRITE_CHARS).describe('exact text to find, whitespace included'),
      new_text: z.string().max(MAX_WRITE_CHARS).describe('replacement text'),
      replace_all: z.boolean().default(false).describe('replace every occurrence instead of requiring exactly one'),
    }),
    policy: { sideEffects: true },
    async run(args, ctx) {
      checkText('old_text', args.old_text);
      checkText('new_text', args.new_text);
      const p = await requireFs(ctx, cfg.baseDirectory, args.path, ['read', 'write'], { field: 'path', refuseGitMetadata: true });
      if (p.kind === null) throw refuse('not_found', 'not_found', `path: ${p.real} does not exist`, { field: 'path', path: p.real });
      const { text } = readTextFile(p.real, 'path');
      await observeExternal(ctx);
      const at = occurrences(text, args.old_text);
      if (at.length === 0) {
        throw refuse(
          'invalid_arguments',
          'old_text_not_found',
          `old_text: not found in ${p.real} (it must match exactly, whitespace and line endings included); read the file again`,
          {
            field: 'old_text',
            path: p.real,
          },
        );
      }
      if (at.length > 1 && !args.replace_all) {
        const lines = at.slice(0, 10).map((o) => lineAt(text, o));
        throw refuse(
          'invalid_arguments',
          'old_text_ambiguous',
          `old_text: occurs ${at.length} times in ${p.real} (lines ${lines.join(', ')}); ` +
            'include more surrounding text so it occurs once, or pass replace_all: true',
          { field: 'old_text', path: p.real, occurrences: at.length, lines },
        );
      }
      const updated = args.replace_all
        ? text.split(args.old_text).join(args.new_text)
        : text.slice(0, at[0]) + args.new_text + text.slice(at[0]! + args.old_text.length);
      const receipt = await auditedWrite(ctx, p, Buffer.from(updated, 'utf8'), 'workspace.file.edit', { replacements: at.length });
      return { ...receipt, replacements: at.length, first_changed_line: lineAt(text, at[0]!) };
    },
  });
