import { defineTool, LibosError, z } from '@libos/sdk';
import { parseNamespaceMetadata } from '../internal/metadata.js';
import { getNamespace, insertNamespace } from '../internal/namespace-repo.js';
import { isOmitted, normalizeNamespace, pathParent } from '../internal/names.js';
import { omDb } from '../internal/schema.js';
import { requireRight } from '../internal/object-access.js';
import { resources } from '@libos/sdk';

const input = z.object({
  namespace: z.string().describe('Slash-delimited namespace to create, e.g. "proj/research". Create parents first.'),
  parent_namespace: z
    .string()
    .nullable()
    .optional()
    .describe('Defaults to the path parent (text before the last "/"); when given it must equal it. Blank means omitted.'),
  metadata: z
    .unknown()
    .optional()
    .meta({ type: 'object', default: {}, description: 'JSON object stored with the namespace; never interpreted and grants nothing.' }),
});

const output = z.object({ namespace: z.string(), parent_namespace: z.string().nullable(), created: z.literal(true) });

/**
 * `create_memory_namespace`: creates one namespace (no upsert). A child needs `write` on its existing parent;
 * the creator gets read/write/admin on the new namespace.
 *
 * @example
 * await rt.call(pid, 'create_memory_namespace', { namespace: 'proj/r' });
 * // { namespace: 'proj/r', parent_namespace: 'proj', created: true }
 */
export const createMemoryNamespace = defineTool({
  name: 'create_memory_namespace',
  description:
    'Create one Object Memory namespace (slash-delimited; parent_namespace defaults to the path parent). ' +
    'A top-level namespace needs no right; a child needs write on its existing parent. Duplicates fail (no ' +
    'ensure/upsert). Metadata grants nothing. Returns namespace, parent_namespace, created=true.',
  input,
  output,
  async run(args, ctx) {
    const db = omDb(ctx.store);
    const metadata = parseNamespaceMetadata(args.metadata);
    const namespace = normalizeNamespace(args.namespace);
    const impliedParent = pathParent(namespace);
    if (!isOmitted(args.parent_namespace)) {
      const explicit = normalizeNamespace(args.parent_namespace, 'parent_namespace');
      if (explicit !== impliedParent) {
        throw new LibosError(
          'invalid_namespace',
          `parent_namespace: ${JSON.stringify(explicit)} is not the path parent of namespace ${JSON.stringify(namespace)} ` +
            `(which is ${impliedParent === null ? 'none: it is top-level' : JSON.stringify(impliedParent)})`,
          { details: { field: 'parent_namespace', namespace, parent_namespace: explicit } },
        );
      }
    }
    if (impliedParent === null && namespace.startsWith('process:')) {
      throw new LibosError(
        'namespace_denied',
        `namespace: top-level ${JSON.stringify(namespace)} is reserved; "process:" scopes are created by the runtime at spawn`,
        {
          details: { field: 'namespace', namespace },
        },
      );
    }
    if (impliedParent !== null) {
      await requireRight(ctx.authority, resources.namespace(impliedParent), 'write', 'namespace_denied', 'parent_namespace');
      if ((await getNamespace(db, impliedParent)) === null) {
        throw new LibosError(
          'namespace_not_found',
          `parent_namespace: ${JSON.stringify(impliedParent)} does not exist; create parents first`,
          {
            details: { field: 'parent_namespace', namespace: impliedParent },
          },
        );
      }
    }
    if ((await getNamespace(db, namespace)) !== null) {
      throw new LibosError(
        'namespace_exists',
        `namespace: ${JSON.stringify(namespace)} already exists; creation is not an ensure operation`,
        {
          details: { field: 'namespace', namespace },
        },
      );
    }
    await insertNamespace(db, {
      namespace,
      parentNamespace: impliedParent,
      metadata,
      createdBy: ctx.pid,
      at: ctx.clock.now().toISOString(),
    });
    await ctx.authority.grantTrusted({
      subject: ctx.pid,
      resource: resources.namespace(namespace),
      rights: ['read', 'write', 'admin'],
      metadata: { granted_by: '@libos/object-memory', reason: 'namespace creator' },
    });
    await ctx.events.emit('object_namespace_created', { namespace, parent_namespace: impliedParent, created_by: ctx.pid });
    await ctx.audit.record({
      action: 'object_namespace.create',
      target: resources.namespace(namespace),
      decision: 'allow',
      details: { parent_namespace: impliedParent },
    });
    return { namespace, parent_namespace: impliedParent, created: true as const };
  },
});
