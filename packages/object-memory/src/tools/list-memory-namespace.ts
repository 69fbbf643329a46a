import { defineTool, LibosError, z, type Authority, type DataLabels, type RuntimeInstance } from '@libos/sdk';
import { LIST_LIMITS } from '../bounds.js';
import { mergeLabels } from '../internal/labels.js';
import { childNamespacesPage, getNamespace } from '../internal/namespace-repo.js';
import { resolveNamespace } from '../internal/names.js';
import { requireRight } from '../internal/object-access.js';
import type { ObjectMemoryDeps } from '../internal/deps.js';
import { allSeenAfterReopen } from '../internal/lazy-sweep.js';
import { objectsPage } from '../internal/object-repo.js';
import { omDb, type OmDb } from '../internal/schema.js';
import { resources } from '@libos/sdk';

const input = z.object({
  namespace: z
    .string()
    .nullable()
    .optional()
    .describe('Exact namespace to list; omitted or blank means your process scope. Never broadened to children or ancestors.'),
  // Range is checked in run (spec: limit_out_of_range), so the schema only requires an integer.
  limit: z
    .union([z.number().int().meta({ minimum: LIST_LIMITS.min, maximum: LIST_LIMITS.max }), z.null()])
    .optional()
    .meta({
      default: LIST_LIMITS.default,
      description:
        `Shared page size, integer ${LIST_LIMITS.min}..${LIST_LIMITS.max} (default ${LIST_LIMITS.default}): Objects ` +
        `consume it first, then child namespaces. A full page does not prove completeness.`,
    }),
});

const objectEntry = z.object({
  oid: z.string(),
  namespace: z.string(),
  name: z.string(),
  type: z.string(),
  version: z.number().int(),
  payload_available: z.literal(false).optional(),
});
const output = z.object({
  namespace: z.string(),
  objects: z.array(objectEntry),
  namespaces: z.array(z.object({ namespace: z.string(), parent_namespace: z.string().nullable() })),
});

/**
 * Scans rows page by page, admitting each through `admit`, until `want` are admitted or the rows end.
 * A scan that reads the ceiling without ending or filling fails instead of returning a silent short page.
 */
async function boundedScan<T, R>(
  fetch: (offset: number, limit: number) => Promise<T[]>,
  admit: (row: T) => Promise<R | null>,
  want: number,
  what: string,
): Promise<R[]> {
  const out: R[] = [];
  let offset = 0;
  while (out.length < want) {
    if (offset >= LIST_LIMITS.scanCeiling) {
      const more = await fetch(offset, 1);
      if (more.length === 0) break;
      throw new LibosError(
        'scan_ceiling_reached',
        `limit: scanning ${what} reached the ${LIST_LIMITS.scanCeiling}-row ceiling before filling ${want} entries; ` +
          `the result would be silently short, so nothing is returned (most entries here are not readable by you)`,
        { details: { field: 'limit', ceiling: LIST_LIMITS.scanCeiling } },
      );
    }
    const requested = Math.min(LIST_LIMITS.scanPage, LIST_LIMITS.scanCeiling - offset);
    const page = await fetch(offset, requested);
    for (const row of page) {
      const admitted = await admit(row);
      if (admitted !== null) out.push(admitted);
      if (out.length >= want) break;
    }
    offset += page.length;
    if (page.length < requested) break; // the rows ended
  }
  return out;
}

/** Admits a row when the caller holds `read` on `resource`, spending a finite use at once (so one use admits one entry). */
async function readable(authority: Authority, resource: string): Promise<boolean> {
  const decision = await authority.check(resource, 'read');
  if (!decision.allowed) return false;
  await authority.consume(decision);
  return true;
}

async function listOnce(
  db: OmDb,
  deps: ObjectMemoryDeps,
  authority: Authority,
  namespace: string,
  limit: number,
  runtime: RuntimeInstance | undefined,
) {
  const labels: DataLabels[] = [];
  const objects = await boundedScan(
    async (offset, n) => allSeenAfterReopen(db, deps.payloads, await objectsPage(db, namespace, offset, n), runtime),
    async (o) => {
      if (!(await readable(authority, resources.object(o.oid)))) return null;
      labels.push(o.labels);
      const entry = { oid: o.oid, namespace: o.namespace, name: o.name, type: o.type, version: o.version };
      return o.lifecycle === 'live' ? entry : { ...entry, payload_available: false as const };
    },
    limit,
    'Objects',
  );
  const remaining = limit - objects.length;
  const namespaces =
    remaining <= 0
      ? []
      : await boundedScan(
          (offset, n) => childNamespacesPage(db, namespace, offset, n),
          async (c) =>
            (await readable(authority, resources.namespace(c.namespace)))
              ? { namespace: c.namespace, parent_namespace: c.parentNamespace }
              : null,
          remaining,
          'child namespaces',
        );
  return { objects, namespaces, labels };
}

/**
 * `list_memory_namespace`: readable Objects of one exact namespace (newest first), then readable direct
 * children, under one shared limit. Identity only: no payload, metadata, labels, cursor or total.
 *
 * @example
 * await rt.call(pid, 'list_memory_namespace', { namespace: 'proj', limit: 4 });
 * // { namespace: 'proj', objects: [{ oid, namespace, name, type, version }, ...],
 * //   namespaces: [{ namespace: 'proj/r', parent_namespace: 'proj' }] }
 */
export const listMemoryNamespaceTool = (deps: ObjectMemoryDeps) =>
  defineTool({
    name: 'list_memory_namespace',
    description:
      'List readable Objects (oid, namespace, name, type, version; newest first) and then readable direct child ' +
      'namespaces of one exact namespace (omitted = your process scope). limit (1..50, default 50) is shared, ' +
      'Objects first. No cursor or total: a full page or a missing name proves nothing. No payload, metadata ' +
      'or labels.',
    input,
    output,
    async run(args, ctx) {
      const db = omDb(ctx.store);
      const namespace = resolveNamespace(args.namespace, ctx.pid);
      await requireRight(ctx.authority, resources.namespace(namespace), 'read', 'namespace_denied', 'namespace');
      if ((await getNamespace(db, namespace)) === null) {
        throw new LibosError('namespace_not_found', `namespace: ${JSON.stringify(namespace)} does not exist`, {
          details: { field: 'namespace', namespace },
        });
      }
      const limit = args.limit ?? LIST_LIMITS.default;
      if (limit < LIST_LIMITS.min || limit > LIST_LIMITS.max) {
        throw new LibosError(
          'limit_out_of_range',
          `limit: must be an integer from ${LIST_LIMITS.min} to ${LIST_LIMITS.max} (got ${limit})`,
          {
            details: { field: 'limit', minimum: LIST_LIMITS.min, maximum: LIST_LIMITS.max },
          },
        );
      }
      const { objects, namespaces, labels } = await listOnce(db, deps, ctx.authority, namespace, limit, ctx.runtime);
      if (labels.length > 0) await ctx.flow.taint(mergeLabels(labels[0]!, labels.slice(1)));
      return { namespace, objects, namespaces };
    },
  });
