import { defineTool, LibosError, z } from '@libos/sdk';
import { READ_LIMITS } from '../bounds.js';
import { canonicalize } from '../internal/canonical.js';
import type { ObjectMemoryDeps } from '../internal/deps.js';
import { parsePointer, resolvePointer } from '../internal/json-pointer.js';
import type { JsonValue } from '../internal/json-value.js';
import { normalizeName, resolveNamespace } from '../internal/names.js';
import { openReadableObject, requirePayload } from '../internal/object-access.js';
import { readPage } from '../internal/paging.js';
import { omDb } from '../internal/schema.js';

const input = z.object({
  name: z.string().describe('Exact Object name (trimmed); never matched by type, OID, case or alias.'),
  namespace: z.string().nullable().optional().describe('Namespace; omitted or blank means your process scope.'),
  max_payload_chars: z
    .number()
    .int()
    .min(READ_LIMITS.minChars)
    .max(READ_LIMITS.maxChars)
    .default(READ_LIMITS.defaultChars)
    .describe(`Characters (code points) per page, ${READ_LIMITS.minChars}..${READ_LIMITS.maxChars}, default ${READ_LIMITS.defaultChars}.`),
  json_pointer: z.string().default('').describe('RFC 6901 pointer selecting a subtree ("" = whole; ~0 is ~, ~1 is /).'),
  cursor: z.number().int().min(0).default(0).describe('UTF-8 byte offset of the page; use only a returned next_cursor.'),
  expected_sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters')
    .nullable()
    .optional()
    .describe("The first page's sha256; required when cursor > 0."),
});

const output = z.object({
  oid: z.string(),
  namespace: z.string(),
  name: z.string(),
  type: z.string(),
  version: z.number().int(),
  json_pointer: z.string(),
  payload_type: z.enum(['object', 'array', 'string', 'number', 'boolean', 'null']),
  shape: z.record(z.string(), z.unknown()),
  serialized_bytes: z.number().int(),
  sha256: z.string(),
  representation: z.enum(['json_value', 'canonical_json_page']),
  payload: z.unknown(),
  preview: z.string().optional(),
  preview_encoding: z.literal('canonical_json_utf8').optional(),
  page_offset_bytes: z.number().int(),
  page_bytes: z.number().int(),
  truncated: z.boolean(),
  omitted_bytes: z.number().int(),
  next_cursor: z.number().int().optional(),
});

/**
 * Builds `read_memory_object`: reads an Object by exact name as canonical JSON, whole (`json_value`) when it
 * fits at cursor 0, else as byte-addressed `canonical_json_page`s under one digest.
 *
 * @example
 * const first = await rt.call(pid, 'read_memory_object', { name: 'ledger', max_payload_chars: 7 });
 * if (!first.ok) throw new Error(first.error.message);
 * const { next_cursor, sha256 } = first.payload as { next_cursor: number; sha256: string };
 * const page = { name: 'ledger', max_payload_chars: 7, cursor: next_cursor, expected_sha256: sha256 };
 * const next = await rt.call(pid, 'read_memory_object', page);
 */
export const readMemoryObjectTool = (deps: ObjectMemoryDeps) =>
  defineTool({
    name: 'read_memory_object',
    description:
      'Read an Object by exact name as canonical JSON (optionally a json_pointer subtree). If it fits max_payload_chars ' +
      'at cursor 0 you get representation json_value with the typed payload; otherwise canonical_json_page ' +
      "with a text preview: follow next_cursor and pass the first page's sha256 as expected_sha256, concatenate " +
      'previews, then parse. A fragment is not JSON evidence.',
    input,
    output,
    policy: { idempotent: true },
    async run(args, ctx) {
      const expected = args.expected_sha256 ?? null;
      if (args.cursor > 0 && expected === null) {
        throw new LibosError(
          'invalid_arguments',
          `expected_sha256: required when cursor > 0 (got cursor ${args.cursor}); pass the first page's sha256`,
          {
            details: { field: 'expected_sha256' },
          },
        );
      }
      const namespace = resolveNamespace(args.namespace, ctx.pid);
      const name = normalizeName(args.name);
      const { record, read } = await openReadableObject(omDb(ctx.store), ctx, namespace, name);
      await ctx.authority.consume(read);
      const payload = (await requirePayload(deps.payloads, record, ctx.runtime)) as JsonValue;
      const tokens = parsePointer(args.json_pointer);
      const selection = resolvePointer(payload, tokens);
      // The whole payload's CANON and digest are cached until its next change (every page of a paged read uses them).
      const canonical = tokens.length === 0 ? deps.payloads.canonical(record.oid)! : canonicalize(selection);
      await ctx.flow.taint(record.labels, [record.oid]);
      return readPage({
        selection,
        canonical,
        maxChars: args.max_payload_chars,
        cursor: args.cursor,
        expectedSha256: expected,
        envelope: {
          oid: record.oid,
          namespace: record.namespace,
          name: record.name,
          type: record.type,
          version: record.version,
          json_pointer: args.json_pointer,
        },
      });
    },
  });
