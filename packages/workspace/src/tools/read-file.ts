import { closeSync } from 'node:fs';
import { defineTool, z } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { refuse } from '../internal/errors.js';
import { binaryRefusal, hasNul, openRegularFile, readAt, readTextFile, sha256Of, BINARY_SNIFF_BYTES } from '../internal/file-io.js';
import { requireFs } from '../internal/fs-access.js';
import { observeExternal } from '../internal/observe.js';
import { MAX_PATH_CHARS } from '../internal/path-text.js';
import { completeEnd, forwardToCharBoundary } from '../internal/utf8.js';

/** Bytes one read returns at most, and by default. */
export const READ_LIMITS = { maxBytes: 60_000, defaultBytes: 20_000 } as const;

const pathField = z.string().min(1).max(MAX_PATH_CHARS);

/** Reads one byte window of a file (any size), cut on character boundaries. */
function readWindow(real: string, offset: number, maxBytes: number) {
  const { fd, stats } = openRegularFile(real, 'path');
  try {
    if (hasNul(readAt(fd, 0, Math.min(BINARY_SNIFF_BYTES, stats.size)))) throw binaryRefusal('path', real);
    if (offset > stats.size)
      throw refuse('invalid_arguments', 'offset_out_of_range', `offset: ${offset} is past the end of ${real} (${stats.size} bytes)`, {
        field: 'offset',
        path: real,
      });
    const raw = readAt(fd, offset, Math.min(maxBytes, stats.size - offset));
    if (forwardToCharBoundary(raw, 0) !== 0) {
      throw refuse(
        'invalid_arguments',
        'offset_not_char_boundary',
        `offset: ${offset} falls inside a UTF-8 character of ${real}; use an offset a previous read returned`,
        {
          field: 'offset',
          path: real,
        },
      );
    }
    const atEnd = offset + raw.length >= stats.size;
    const end = atEnd ? raw.length : completeEnd(raw);
    let content: string;
    try {
      content = new TextDecoder('utf-8', { fatal: true }).decode(raw.subarray(0, end));
    } catch (err) {
      throw binaryRefusal('path', real, err);
    }
    const next = offset + end < stats.size ? offset + end : null;
    return { content, offset, bytes_read: end, next_offset: next, total_bytes: stats.size, truncated: next !== null };
  } finally {
    closeSync(fd);
  }
}

/** Splits text into lines, each keeping its `\n` (the last one may have none). */
function linesOf(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\n)/);
}

/** Reads lines `start..end` (1-based, inclusive) within `maxBytes`, whole lines except a first line longer than the bound. */
function readLines(real: string, start: number, end: number | undefined, maxBytes: number) {
  const { text, bytes } = readTextFile(real, 'path');
  const lines = linesOf(text);
  const total = lines.length;
  if (start > Math.max(total, 1)) {
    throw refuse('invalid_arguments', 'line_out_of_range', `start_line: ${start} is past the last line of ${real} (${total} lines)`, {
      field: 'start_line',
      path: real,
      total_lines: total,
    });
  }
  const last = Math.min(end ?? total, total);
  if (end !== undefined && end < start)
    throw refuse('invalid_arguments', 'line_out_of_range', `end_line: ${end} is before start_line ${start}`, { field: 'end_line' });
  let content = '';
  let used = 0;
  let lineNo = start;
  let lineCut = false;
  for (; lineNo <= last; lineNo++) {
    const line = lines[lineNo - 1]!;
    const size = Buffer.byteLength(line, 'utf8');
    if (used + size > maxBytes) {
      if (used === 0) {
        const buf = Buffer.from(line, 'utf8');
        content = buf.subarray(0, completeEnd(buf.subarray(0, maxBytes))).toString('utf8');
        lineCut = true;
        lineNo++;
      }
      break;
    }
    content += line;
    used += size;
  }
  const endLine = lineNo - 1;
  return {
    content,
    start_line: start,
    end_line: Math.max(endLine, start - 1),
    total_lines: total,
    total_bytes: bytes.length,
    truncated: endLine < last || lineCut,
    line_cut: lineCut,
    next_start_line: endLine < total ? endLine + 1 : null,
    sha256: sha256Of(bytes),
  };
}

/**
 * `read_file`: UTF-8 text of one file, by line range (whole lines, files up to 16 MiB) or by byte `offset` (any
 * size, cut on character boundaries). Binary files are refused. Needs `read` on `fs:<real path>`.
 */
export const readFile = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'read_file',
    description:
      'Read a UTF-8 text file. By lines: start_line/end_line (1-based, inclusive; default the whole file) within max_bytes; or by ' +
      'byte offset for very large files (pass next_offset back). Refuses binary files and directories. Needs read on fs:<absolute ' +
      'path>.',
    input: z.object({
      path: pathField.describe('file path, relative to your working directory or absolute'),
      start_line: z.number().int().min(1).optional().describe('first line, 1-based (default 1)'),
      end_line: z.number().int().min(1).optional().describe('last line, inclusive (default: the last line)'),
      offset: z
        .number()
        .int()
        .min(0)
        .optional()
        .describe('byte offset instead of lines: for files over 16 MiB; use next_offset from the previous read'),
      max_bytes: z
        .number()
        .int()
        .min(1)
        .max(READ_LIMITS.maxBytes)
        .default(READ_LIMITS.defaultBytes)
        .describe(`bytes returned at most, 1..${READ_LIMITS.maxBytes}`),
    }),
    async run(args, ctx) {
      if (args.offset !== undefined && (args.start_line !== undefined || args.end_line !== undefined)) {
        throw refuse('invalid_arguments', 'conflicting_arguments', 'offset: give either offset or start_line/end_line, not both', {
          field: 'offset',
        });
      }
      const p = await requireFs(ctx, cfg.baseDirectory, args.path, ['read'], { field: 'path' });
      if (p.kind === null) throw refuse('not_found', 'not_found', `path: ${p.real} does not exist`, { field: 'path', path: p.real });
      const body =
        args.offset !== undefined
          ? readWindow(p.real, args.offset, args.max_bytes)
          : readLines(p.real, args.start_line ?? 1, args.end_line, args.max_bytes);
      await observeExternal(ctx);
      return { path: p.real, ...body };
    },
  });
