import { payloadHolder } from './lazy-sweep.js';
import { LibosError, type Authority, type Decision, type RuntimeInstance, type StoreMemo } from '@libos/sdk';
import { lookupName } from './object-repo.js';
import { rememberObjectOwner } from './object-owners.js';
import type { ObjectRecord } from './records.js';
import type { OmDb } from './schema.js';
import type { PayloadStore } from '../payload-store.js';
import { resources } from '@libos/sdk';

/** The message and error for a name that is missing or unreadable: identical on purpose (no existence oracle). */
export function objectNotFound(namespace: string, name: string): LibosError {
  return new LibosError(
    'object_not_found',
    `name: no readable Object named ${JSON.stringify(name)} in namespace ${JSON.stringify(namespace)}`,
    {
      details: { field: 'name', namespace, name },
    },
  );
}

/** `require` that throws `code` with a message naming the resource and right. */
export async function requireRight(
  authority: Authority,
  resource: string,
  right: 'read' | 'write',
  code: 'namespace_denied' | 'object_denied',
  field: string,
): Promise<Decision> {
  return authority.require(resource, right, {
    code,
    message: `${field}: the caller lacks ${right} on ${resource}`,
  });
}

/**
 * The common first steps of read and append: namespace read (`namespace_denied`, spent at once), namespace
 * exists (`namespace_not_found`), the name is held (`object_not_found`), object read (`object_not_found`: an
 * unreadable Object looks exactly like a missing one). The object-read decision is returned unspent, so the
 * caller can spend one finite grant once for all the rights it needs; the transaction restores spent uses on failure.
 */
export async function openReadableObject(
  db: OmDb,
  ctx: { readonly authority: Authority; readonly memo?: StoreMemo },
  namespace: string,
  name: string,
): Promise<{ readonly record: ObjectRecord; readonly read: Decision }> {
  const { authority } = ctx;
  await requireRight(authority, resources.namespace(namespace), 'read', 'namespace_denied', 'namespace');
  const { namespaceExists, object: record } = await lookupName(db, namespace, name);
  if (!namespaceExists) {
    throw new LibosError('namespace_not_found', `namespace: ${JSON.stringify(namespace)} does not exist`, {
      details: { field: 'namespace', namespace },
    });
  }
  if (record === null) throw objectNotFound(namespace, name);
  rememberObjectOwner(ctx, record); // the row just read: the check below reads no owner row (K-9.29)
  const read = await authority.check(resources.object(record.oid), 'read');
  if (!read.allowed) throw objectNotFound(namespace, name);
  return { record, read };
}

/** Spends the finite uses behind `decisions`, each grant once (one read+write grant pays once for one append). */
export async function spendOnce(authority: Authority, decisions: readonly Decision[]): Promise<void> {
  const spent = new Set<string>();
  for (const d of decisions) {
    if (d.consumeId !== undefined && spent.has(d.consumeId)) continue;
    await authority.consume(d);
    if (d.consumeId !== undefined) spent.add(d.consumeId);
  }
}

/**
 * The payload of a record, failing closed when it did not survive a reopen, or (`payload_unavailable`) when another
 * live host of a shared store holds it (`runtime` tells).
 */
export async function requirePayload(payloads: PayloadStore, record: ObjectRecord, runtime?: RuntimeInstance): Promise<unknown> {
  await requireAvailable(payloads, record, runtime);
  return payloads.get(record.oid);
}

/** Fails closed, as `requirePayload`, when the record's payload is not in this runtime; reads nothing. */
export async function requireAvailable(payloads: PayloadStore, record: ObjectRecord, runtime?: RuntimeInstance): Promise<void> {
  if (record.lifecycle === 'live' && payloads.has(record.oid)) return;
  const host = record.heldBy ?? (record.lifecycle === 'live' ? await payloadHolder(record, runtime) : null);
  if (host)
    throw new LibosError(
      'payload_unavailable',
      `${record.namespace}/${record.name} (${record.oid}, version ${record.version}): its payload is runtime-local on host ` +
        `${host}, which runs the process tree that wrote it; read it there (a process of that tree, or that host's ` +
        'API), or through a checkpoint. It is not lost.',
      { details: { oid: record.oid, namespace: record.namespace, name: record.name, version: record.version, host } },
    );
  if (record.lifecycle !== 'live' || !payloads.has(record.oid)) {
    throw new LibosError(
      'payload_unavailable_after_reopen',
      `${record.namespace}/${record.name} (${record.oid}, version ${record.version}): its payload was runtime-local ` +
        `and did not survive the Runtime reopen; recover the content from an authoritative file or a captured ` +
        `checkpoint, then create it again under this name. Do not infer it from the surviving metadata, version or OID.`,
      { details: { oid: record.oid, namespace: record.namespace, name: record.name, version: record.version } },
    );
  }
}
