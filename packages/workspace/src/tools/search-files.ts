import { closeSync } from 'node:fs';
import { defineTool, z } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { refuse } from '../internal/errors.js';
import { hasNul, openRegularFile, readAt } from '../internal/file-io.js';
import { fsResource, requireFs } from '../internal/fs-access.js';
import { observeExternal } from '../internal/observe.js';
import { isUtf8, MAX_PATH_CHARS } from '../internal/path-text.js';
import { globMatcher, walk } from '../internal/walk.js';

/** Bounds of a search. */
export const SEARCH_LIMITS = {
  maxMatches: 1_000,
  defaultMatches: 100,
  maxFileBytes: 4 * 1024 * 1024,
  maxScannedBytes: 64 * 1024 * 1024,
  lineChars: 300,
  testedLineChars: 10_000,
} as const;

/** A line shown around its match, at most `SEARCH_LIMITS.lineChars` characters. */
function excerpt(line: string, index: number): string {
  if (line.length <= SEARCH_LIMITS.lineChars) return line;
  const start = Math.max(0, Math.min(index - 100, line.length - SEARCH_LIMITS.lineChars));
  return `${start > 0 ? '…' : ''}${line.slice(start, start + SEARCH_LIMITS.lineChars)}…`;
}

/**
 * `search_files`: a JavaScript regular expression over the text files under a directory (recursive, glob-filtered),
 * with bounded output: at most `max_matches` lines, each cut to 300 characters; binary and very large files are
 * skipped and counted. Needs `read` on `fs:<real directory>` and on each file searched (denied files are skipped).
 */
export const searchFiles = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'search_files',
    description:
      'Search text files under a directory (default your working directory) for a JavaScript regular expression, line by line. glob ' +
      'filters files (e.g. "**/*.ts"). Returns path, line number and the line; bounded by max_matches. Needs read on fs:<absolute ' +
      'path>.',
    input: z.object({
      pattern: z.string().min(1).max(1_000).describe('JavaScript regular expression source, e.g. "export function \\\\w+"'),
      path: z.string().min(1).max(MAX_PATH_CHARS).default('.'),
      glob: z.string().min(1).max(500).optional(),
      case_insensitive: z.boolean().default(false),
      include_hidden: z.boolean().default(false),
      max_matches: z.number().int().min(1).max(SEARCH_LIMITS.maxMatches).default(SEARCH_LIMITS.defaultMatches),
    }),
    async run(args, ctx) {
      let re: RegExp;
      try {
        re = new RegExp(args.pattern, args.case_insensitive ? 'i' : '');
      } catch (err) {
        throw refuse(
          'invalid_arguments',
          'bad_pattern',
          `pattern: not a valid JavaScript regular expression: ${(err as Error).message}`,
          { field: 'pattern' },
          err,
        );
      }
      const p = await requireFs(ctx, cfg.baseDirectory, args.path, ['read'], { field: 'path' });
      if (p.kind === null) throw refuse('not_found', 'not_found', `path: ${p.real} does not exist`, { field: 'path', path: p.real });
      const match = globMatcher(args.glob, args.include_hidden);
      const matches: { path: string; line: number; text: string }[] = [];
      const skipped = { binary: 0, too_large: 0, denied: 0 };
      let filesSearched = 0;
      let scannedBytes = 0;
      let truncated = false;
      const searchOne = (abs: string, rel: string): boolean => {
        const { fd, stats } = openRegularFile(abs, 'path');
        try {
          if (stats.size > SEARCH_LIMITS.maxFileBytes) {
            skipped.too_large++;
            return true;
          }
          if (scannedBytes + stats.size > SEARCH_LIMITS.maxScannedBytes) {
            truncated = true;
            return false;
          }
          const bytes = readAt(fd, 0, stats.size);
          scannedBytes += bytes.length;
          if (hasNul(bytes) || !isUtf8(bytes)) {
            skipped.binary++;
            return true;
          }
          filesSearched++;
          const lines = bytes.toString('utf8').split('\n');
          for (let i = 0; i < lines.length; i++) {
            const line = lines[i]!;
            const m = re.exec(line.length > SEARCH_LIMITS.testedLineChars ? line.slice(0, SEARCH_LIMITS.testedLineChars) : line);
            if (!m) continue;
            if (matches.length >= args.max_matches) {
              truncated = true;
              return false;
            }
            matches.push({ path: rel, line: i + 1, text: excerpt(line.replace(/\r$/, ''), m.index) });
          }
          return true;
        } finally {
          closeSync(fd);
        }
      };
      if (p.kind === 'file') searchOne(p.real, p.real);
      else if (p.kind !== 'directory')
        throw refuse('invalid_arguments', 'not_a_regular_file', `path: ${p.real} is neither a file nor a directory`, {
          field: 'path',
          path: p.real,
        });
      else {
        const report = await walk(
          ctx,
          p.real,
          { recursive: true, includeHidden: args.include_hidden, maxDepth: 32, maxScanned: 50_000 },
          async (e) => {
            if (e.type !== 'file' || (match && !match(e.rel))) return true;
            if (!(await ctx.authority.check(fsResource(e.abs), 'read')).allowed) {
              skipped.denied++;
              return true;
            }
            return searchOne(e.abs, e.rel);
          },
        );
        truncated ||= report.scanLimitReached;
        skipped.denied += report.deniedDirectories.length;
      }
      await observeExternal(ctx);
      return { path: p.real, pattern: args.pattern, matches, truncated, files_searched: filesSearched, skipped };
    },
  });
