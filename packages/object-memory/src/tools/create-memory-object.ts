import { defineTool, LibosError, newId, z, type DataLabels } from '@libos/sdk';
import { MAX_PAYLOAD_SIZE } from '../bounds.js';
import type { ObjectMemoryDeps } from '../internal/deps.js';
import { requireJson } from '../internal/json-value.js';
import { mergeLabels, requireValidLabels } from '../internal/labels.js';
import { seenAfterReopen } from '../internal/lazy-sweep.js';
import { parseModelMetadata } from '../internal/metadata.js';
import { normalizeName, resolveNamespace } from '../internal/names.js';
import { requireRight } from '../internal/object-access.js';
import { getObject, lookupName } from '../internal/object-repo.js';
import { observedParents } from '../internal/observed-chain.js';
import { OBJECT_TYPES, requireObjectType } from '../object-types.js';
import { omDb } from '../internal/schema.js';
import { jsonSize } from '../internal/size.js';
import { requireFreeName, storeObject } from '../internal/store-object.js';
import { resources } from '@libos/sdk';

const input = z.object({
  type: z.string().meta({ enum: [...OBJECT_TYPES], description: 'Object type (classifies; imposes no payload schema).' }),
  payload: z.unknown().meta({
    description:
      `Direct JSON value (object, array, string, number, boolean or null; required, null allowed). Pass containers ` +
      `directly, not encoded strings. SIZE at most ${MAX_PAYLOAD_SIZE}.`,
  }),
  name: z
    .string()
    .nullable()
    .optional()
    .describe('Stable name, unique among live Objects of the namespace. Omitted or "" means "<type>:<oid>".'),
  namespace: z.string().nullable().optional().describe('Target namespace (needs write); omitted or blank means your process scope.'),
  metadata: z
    .unknown()
    .optional()
    .meta({
      type: 'object',
      default: {},
      description:
        'Optional keys: title, summary, tags, mime_type, sensitivity, retention_policy, trust_level, integrity, ' +
        'tenant, principal. trust_level/integrity may only be untrusted or unknown.',
    }),
  parent_oids: z.array(z.string()).optional().meta({ default: [], description: 'OIDs of readable source Objects this one derives from.' }),
  parents: z.array(z.string()).optional().describe('Alias of parent_oids; both are unioned.'),
  immutable: z.boolean().default(true).describe('Default true. Set false at creation to allow appends.'),
});

const output = z.object({ oid: z.string(), namespace: z.string(), name: z.string(), type: z.string() });

/**
 * Builds `create_memory_object`: creates a typed JSON Object, grants the creator its handle and attaches it
 * to the caller's MemoryView, all in the call's transaction.
 *
 * @example
 * await rt.call(pid, 'create_memory_object', { type: 'plan', name: 'ledger', payload: { entries: [] }, immutable: false });
 * // { oid: 'obj_…', namespace: 'process:pid_…', name: 'ledger', type: 'plan' }
 */
export const createMemoryObjectTool = (deps: ObjectMemoryDeps) =>
  defineTool({
    name: 'create_memory_object',
    description:
      'Create a typed JSON Object (required: type, payload) in a namespace you can write (omitted = your process ' +
      'scope) and attach its handle to your MemoryView. Optional: name, metadata, parent_oids (readable sources), ' +
      'immutable (default true; set false to append later). Returns oid, namespace, name, type only. Names ' +
      'are unique per namespace; no upsert.',
    input,
    output,
    async run(args, ctx) {
      const db = omDb(ctx.store);
      const parsed = parseModelMetadata(args.metadata);
      let labels = mergeLabels(parsed.declared, [await ctx.flow.labels()]);
      const observed = ctx.flow.sources();
      const type = requireObjectType(args.type);
      const payload = requireJson(args.payload, 'payload');
      const size = jsonSize(payload);
      if (size > MAX_PAYLOAD_SIZE) {
        throw new LibosError(
          'payload_too_large',
          `payload: SIZE must be at most ${MAX_PAYLOAD_SIZE} (got ${size}); split it into named chunks or parent-linked summaries`,
          {
            details: { field: 'payload', size, maximum: MAX_PAYLOAD_SIZE },
          },
        );
      }
      const oid = newId('obj');
      const namespace = resolveNamespace(args.namespace, ctx.pid);
      const name = args.name == null || args.name === '' ? `${type}:${oid}` : normalizeName(args.name);
      await requireRight(ctx.authority, resources.namespace(namespace), 'write', 'namespace_denied', 'namespace');
      const lookup = await lookupName(db, namespace, name);
      if (!lookup.namespaceExists) {
        throw new LibosError('namespace_not_found', `namespace: ${JSON.stringify(namespace)} does not exist; create it first`, {
          details: { field: 'namespace', namespace },
        });
      }
      const holder = requireFreeName(await seenAfterReopen(db, deps.payloads, lookup.object, ctx.runtime), namespace, name);
      const explicit = [...new Set([...(args.parent_oids ?? []), ...(args.parents ?? [])])];
      const parentLabels: DataLabels[] = [];
      for (const [i, parent] of explicit.entries()) {
        if (parent.trim() === '') {
          throw new LibosError('parent_invalid', `parent_oids[${i}]: must be a non-empty OID string`, {
            details: { field: 'parent_oids' },
          });
        }
        // Authority before existence: an unreadable OID must not reveal whether it exists.
        const decision = await ctx.authority.check(resources.object(parent), 'read');
        if (!decision.allowed) {
          throw new LibosError(
            'parent_unavailable',
            `parent_oids[${i}]: ${JSON.stringify(parent)} is not readable by the caller; correct the OID or obtain read authority`,
            {
              details: { field: 'parent_oids', oid: parent },
            },
          );
        }
        await ctx.authority.consume(decision);
        const record = await getObject(db, parent);
        if (record === null || (record.lifecycle !== 'live' && record.lifecycle !== 'payload_unavailable')) {
          throw new LibosError('parent_not_found', `parent_oids[${i}]: no live Object ${JSON.stringify(parent)}`, {
            details: { field: 'parent_oids', oid: parent },
          });
        }
        parentLabels.push(record.labels);
      }
      labels = requireValidLabels(mergeLabels(labels, parentLabels), 'labels');
      const lineage = observedParents(ctx, deps.chains, {
        pid: ctx.pid,
        oid,
        parents: explicit,
        sourceOids: observed,
        immutable: args.immutable,
      });
      await storeObject(ctx, deps.payloads, {
        oid,
        namespace,
        name,
        type,
        holder,
        payload,
        immutable: args.immutable,
        metadata: parsed.descriptive,
        labels,
        provenance: lineage.provenance('llm.create_memory_object', [ctx.callId]),
        checkedParents: explicit,
        observedSources: lineage.count,
        ownerKind: 'process',
        ownerId: ctx.pid,
        createdBy: ctx.pid,
        attachTo: ctx.pid,
        action: 'object.create',
      });
      lineage.stored();
      await ctx.flow.taint(labels);
      return { oid, namespace, name, type };
    },
  });
