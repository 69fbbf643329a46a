import { defineTool, z } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { refuse } from '../internal/errors.js';
import { requireFs } from '../internal/fs-access.js';
import { observeExternal } from '../internal/observe.js';
import { MAX_PATH_CHARS } from '../internal/path-text.js';
import { globMatcher, sizeOf, walk, type EntryType } from '../internal/walk.js';

/** Bounds of a listing. */
export const LIST_LIMITS = { maxEntries: 2_000, defaultEntries: 200, maxDepth: 32, maxScanned: 50_000 } as const;

/**
 * `list_files`: the entries of a directory, optionally recursive and filtered by a glob (picomatch), in name order.
 * Symbolic links are listed, never followed. Needs `read` on `fs:<real directory>` (and on each subdirectory
 * entered: one the caller may not read is reported, not listed).
 */
export const listFiles = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'list_files',
    description:
      'List a directory (default your working directory). glob filters relative paths (e.g. "src/**/*.ts"; implies recursive). ' +
      'Hidden entries are skipped unless include_hidden. Symlinks are listed, not followed. Needs read on fs:<absolute directory>.',
    input: z.object({
      path: z.string().min(1).max(MAX_PATH_CHARS).default('.'),
      glob: z.string().min(1).max(500).optional().describe('picomatch glob on paths relative to path, e.g. "**/*.test.ts"'),
      recursive: z.boolean().optional().describe('descend into subdirectories (default: true when glob is given)'),
      include_hidden: z.boolean().default(false).describe('include names starting with "."'),
      max_entries: z.number().int().min(1).max(LIST_LIMITS.maxEntries).default(LIST_LIMITS.defaultEntries),
      max_depth: z.number().int().min(1).max(LIST_LIMITS.maxDepth).default(LIST_LIMITS.maxDepth),
    }),
    async run(args, ctx) {
      const p = await requireFs(ctx, cfg.baseDirectory, args.path, ['read'], { field: 'path' });
      if (p.kind === null) throw refuse('not_found', 'not_found', `path: ${p.real} does not exist`, { field: 'path', path: p.real });
      if (p.kind !== 'directory')
        throw refuse('invalid_arguments', 'not_a_directory', `path: ${p.real} is not a directory (read it with read_file)`, {
          field: 'path',
          path: p.real,
        });
      const match = globMatcher(args.glob, args.include_hidden);
      const recursive = args.recursive ?? match !== null;
      const entries: { path: string; type: EntryType; size: number | null }[] = [];
      let truncated = false;
      const report = await walk(
        ctx,
        p.real,
        { recursive, includeHidden: args.include_hidden, maxDepth: args.max_depth, maxScanned: LIST_LIMITS.maxScanned },
        (e) => {
          if (match && !match(e.rel)) return true;
          if (entries.length >= args.max_entries) {
            truncated = true;
            return false;
          }
          entries.push({ path: e.rel, type: e.type, size: e.type === 'file' ? sizeOf(e.abs) : null });
          return true;
        },
      );
      await observeExternal(ctx);
      return {
        path: p.real,
        entries,
        truncated: truncated || report.scanLimitReached,
        scanned: report.scanned,
        non_utf8_names: report.nonUtf8,
        non_utf8_count: report.nonUtf8Count,
        unreadable_directories: report.deniedDirectories,
      };
    },
  });
