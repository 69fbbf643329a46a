import { defineTool, LibosError, z } from '@libos/sdk';
import { MAX_ENTRY_SIZE, MAX_PAYLOAD_SIZE } from '../bounds.js';
import type { ObjectMemoryDeps } from '../internal/deps.js';
import { observedObjects } from '../internal/observed-chain.js';
import { requireJson } from '../internal/json-value.js';
import { mergeLabels, requireValidLabels } from '../internal/labels.js';
import { tokensForChars } from '../internal/metadata.js';
import { normalizeName, resolveNamespace } from '../internal/names.js';
import { objectNotFound, openReadableObject, requireAvailable, spendOnce } from '../internal/object-access.js';
import { getObject, writeAppend } from '../internal/object-repo.js';
import { omDb } from '../internal/schema.js';
import { jsonSize } from '../internal/size.js';
import { resources } from '@libos/sdk';

const input = z.object({
  name: z.string().describe('Exact Object name (trimmed).'),
  namespace: z.string().nullable().optional().describe('Namespace; omitted or blank means your process scope.'),
  entry: z.unknown().meta({ description: `Direct JSON value to append (required; null allowed). SIZE at most ${MAX_ENTRY_SIZE}.` }),
  list_field: z
    .string()
    .default('entries')
    .describe('List field of an object payload (default "entries"; a missing field is created, so typos matter). Ignored for a root list.'),
});

const output = z.object({
  oid: z.string(),
  namespace: z.string(),
  name: z.string(),
  version: z.number().int(),
  appended: z.literal(true),
  list_field: z.string().nullable(),
  length: z.number().int(),
});

/**
 * Builds `append_memory_object`: appends one JSON entry to a mutable Object's list, bumping its version under
 * a conditional write. No caller CAS and no dedupe: a blind retry appends twice.
 *
 * @example
 * await rt.call(pid, 'append_memory_object', { name: 'ledger', entry: { x: 1 } });
 * // { oid, namespace, name: 'ledger', version: 2, appended: true, list_field: 'entries', length: 1 }
 */
export const appendMemoryObjectTool = (deps: ObjectMemoryDeps) =>
  defineTool({
    name: 'append_memory_object',
    description:
      'Append one direct JSON entry to a mutable Object you can read and write. Object payload: appends to ' +
      'list_field (default "entries"; a missing field is created, a non-list fails). Root list: appends to ' +
      'it (list_field ignored, returned null). Scalars and immutable Objects fail. Returns identity, new version, ' +
      'appended=true, list_field and length, never content. Blind retries duplicate entries.',
    input,
    output,
    async run(args, ctx) {
      const db = omDb(ctx.store);
      const namespace = resolveNamespace(args.namespace, ctx.pid);
      const name = normalizeName(args.name);
      const { record, read } = await openReadableObject(db, ctx, namespace, name);
      const write = await ctx.authority.check(resources.object(record.oid), 'write');
      if (!write.allowed) {
        throw new LibosError('object_denied', `name: the caller may read but not write ${record.namespace}/${record.name}`, {
          details: { field: 'name', oid: record.oid },
        });
      }
      await spendOnce(ctx.authority, [read, write]);
      if (record.immutable) {
        throw new LibosError(
          'object_immutable',
          `name: ${record.namespace}/${record.name} is immutable (fixed at creation); create a mutable Object instead`,
          {
            details: { field: 'name', oid: record.oid },
          },
        );
      }
      await requireAvailable(deps.payloads, record, ctx.runtime);
      const entry = requireJson(args.entry, 'entry');
      const entrySize = jsonSize(entry);
      if (entrySize > MAX_ENTRY_SIZE) {
        throw new LibosError(
          'entry_too_large',
          `entry: SIZE must be at most ${MAX_ENTRY_SIZE} (got ${entrySize}); split it or link a separate Object`,
          {
            details: { field: 'entry', size: entrySize, maximum: MAX_ENTRY_SIZE },
          },
        );
      }
      // O(entry): the store knows the payload's SIZE and CANON length, so nothing re-reads the whole ledger.
      const outcome = deps.payloads.planAppend(record.oid, args.list_field, entry, entrySize);
      const newSize = outcome.after.size;
      if (newSize > MAX_PAYLOAD_SIZE) {
        throw new LibosError(
          'payload_too_large',
          `entry: the payload would grow to SIZE ${newSize}, above ${MAX_PAYLOAD_SIZE}; nothing was appended`,
          {
            details: { field: 'entry', size: newSize, maximum: MAX_PAYLOAD_SIZE },
          },
        );
      }
      const labels = requireValidLabels(mergeLabels(record.labels, [await ctx.flow.labels()]), 'labels');
      // Objects only, as a create lists them (OM-77.3), and never the ledger itself (OM-77).
      const sources = observedObjects(ctx.flow.sources(), []).filter((oid) => oid !== record.oid);
      const provenance = { ...record.provenance, parent_oids: [...new Set([...record.provenance.parent_oids, ...sources])] };
      const metadata = { ...record.metadata, token_estimate: tokensForChars(outcome.after.canonicalChars) };
      const written = await writeAppend(db, {
        oid: record.oid,
        expectVersion: record.version,
        expectOwnerKind: record.ownerKind,
        expectOwnerId: record.ownerId,
        metadata,
        labels,
        provenance,
        at: ctx.clock.now().toISOString(),
      });
      if (!written) {
        const now = await getObject(db, record.oid);
        if (now === null || now.lifecycle === 'released' || now.lifecycle === 'superseded') throw objectNotFound(namespace, name);
        throw new LibosError(
          'version_conflict',
          `name: ${record.namespace}/${record.name} changed while appending (expected version ${record.version}); ` +
            `nothing was appended: re-read it and retry only if the entry is absent`,
          {
            details: { field: 'name', oid: record.oid, expected_version: record.version },
          },
        );
      }
      ctx.onRollback(outcome.apply());
      const version = record.version + 1;
      await ctx.events.emit('object_appended', {
        oid: record.oid,
        namespace: record.namespace,
        name: record.name,
        version,
        list_field: outcome.listField,
        length: outcome.length,
      });
      await ctx.audit.record({
        action: 'object.append',
        target: resources.object(record.oid),
        decision: 'allow',
        details: { version, list_field: outcome.listField, length: outcome.length, entry_size: entrySize, labels },
      });
      await ctx.flow.taint(labels);
      return {
        oid: record.oid,
        namespace: record.namespace,
        name: record.name,
        version,
        appended: true as const,
        list_field: outcome.listField,
        length: outcome.length,
      };
    },
  });
