// Long file: the ObjectsService implementation, one method per service operation over the same store helpers.
import {
  LibosError,
  newId,
  type DataLabels,
  type HostObjectInput,
  type ObjectRef,
  type ObjectLink,
  type ObjectsService,
  type RenderedView,
  type ServiceScope,
} from '@libos/sdk';
import type { ObjectMemoryDeps } from './internal/deps.js';
import { requireJson, type JsonValue } from './internal/json-value.js';
import { mergeLabels, requireValidLabels } from './internal/labels.js';
import { allSeenAfterReopen, seenAfterReopen } from './internal/lazy-sweep.js';
import { parseHostMetadata } from './internal/metadata.js';
import { getNamespace, insertNamespace } from './internal/namespace-repo.js';
import { normalizeName, normalizeNamespace, pathParent, processNamespace } from './internal/names.js';
import { fullProvenance, observedParents } from './internal/observed-chain.js';
import { requirePayload } from './internal/object-access.js';
import { findObjectByName, getObject, lifecyclesAndLabels, listVisibleObjects, lookupName, writeAppend } from './internal/object-repo.js';
import { MAX_PAYLOAD_SIZE } from './bounds.js';
import { tokenEstimate } from './internal/metadata.js';
import { writePayload } from './internal/payload-writes.js';
import { jsonSize } from './internal/size.js';
import { requireObjectType } from './object-types.js';
import type { ObjectRecord } from './internal/records.js';
import { omDb } from './internal/schema.js';
import { requireFreeName, storeObject } from './internal/store-object.js';
import { DEFAULT_VIEW_TOKEN_BUDGET, planView, type ObjectViewManifestEntry, type RootCandidate } from './internal/view-plan.js';
import { addRoot, ensureView, getView, setViewFilters, viewRootObjects, viewRoots, type ViewFilter } from './internal/view-repo.js';
import { insertLink, linksFrom as linksFromRepo } from './internal/link-repo.js';
import { releaseEnded as releaseEndedImpl } from './internal/release.js';
import { resources } from '@libos/sdk';

export type { ViewFilter, ViewMode } from './internal/view-repo.js';
export type { ObjectViewManifestEntry } from './internal/view-plan.js';

/** Everything durable about an Object except its payload (host inspection: CLI, tests, checkpoints). */
export interface ObjectDescription extends ObjectRecord {
  readonly payloadAvailable: boolean;
}

/** A rendered view whose manifest also carries each root's rendered sha256 and labels. */
export interface ObjectRenderedView extends RenderedView {
  readonly manifest: readonly ObjectViewManifestEntry[];
}

/**
 * The `objects` service of `@libos/object-memory`: the sdk's ObjectsService plus host-side view and
 * inspection helpers. Host operations do not check the caller's rights.
 */
export interface ObjectMemoryService extends ObjectsService {
  renderView(pid: string, opts?: { readonly tokenBudget?: number }): Promise<ObjectRenderedView>;
  /** Every durable fact about an Object (metadata, labels, provenance, lifecycle), or null. Never the payload. */
  inspect(oid: string): Promise<ObjectDescription | null>;
  /** The pid's MemoryView roots in order (oid and the handle's capability id). */
  viewRoots(pid: string): Promise<readonly { readonly oid: string; readonly capabilityId: string | null }[]>;
  /**
   * Host inspection: listed Objects (live or payload-unavailable), newest first, optionally of one namespace and/or
   * one owner process; at most `limit` (default 100, at most 10,000). Metadata only, never payloads.
   */
  listObjects(q?: { readonly namespace?: string; readonly ownerPid?: string; readonly limit?: number }): Promise<ObjectDescription[]>;
  /** Replaces the pid's MemoryView filters (host view management; no model tool does this). */
  setViewFilters(pid: string, filters: readonly ViewFilter[]): Promise<void>;
}

/**
 * Builds the `objects` service bound to one scope (one store transaction).
 *
 * @example
 * const objects = scope.service<ObjectMemoryService>('objects');
 * await objects.initProcess(pid);
 * const goal = await objects.createForProcess(pid, { type: 'goal', payload: { text: 'Ship it' } });
 */
export function createObjectsService(scope: ServiceScope, deps: ObjectMemoryDeps): ObjectMemoryService {
  const db = omDb(scope.store);
  const now = () => scope.clock.now().toISOString();

  async function initProcess(pid: string): Promise<void> {
    const namespace = processNamespace(pid);
    if ((await getNamespace(db, namespace)) !== null) {
      throw new LibosError('namespace_exists', `initProcess: ${namespace} already exists`, { details: { namespace } });
    }
    await insertNamespace(db, { namespace, parentNamespace: null, metadata: {}, createdBy: 'runtime', at: now() });
    await scope.authorityFor(pid).grantTrusted({
      subject: pid,
      resource: resources.namespace(namespace),
      rights: ['read', 'write', 'admin'],
      metadata: { granted_by: '@libos/object-memory', reason: 'process scope' },
    });
    await ensureView(db, pid, 'mutable', 'spawn', now());
    await scope.events.emit('object_namespace_created', { namespace, parent_namespace: null, created_by: 'runtime' });
  }

  /** A host-created child of a process scope, owned (read/write/admin) by that process. */
  async function createOwnedNamespace(ownerPid: string, namespace: string, parent: string): Promise<void> {
    await insertNamespace(db, { namespace, parentNamespace: parent, metadata: {}, createdBy: 'runtime', at: now() });
    await scope.authorityFor(ownerPid).grantTrusted({
      subject: ownerPid,
      resource: resources.namespace(namespace),
      rights: ['read', 'write', 'admin'],
      metadata: { granted_by: '@libos/object-memory', reason: 'process scope child' },
    });
    await scope.events.emit('object_namespace_created', { namespace, parent_namespace: parent, created_by: 'runtime' });
  }

  async function createForProcess(ownerPid: string, input: HostObjectInput): Promise<ObjectRef> {
    const type = requireObjectType(input.type);
    const payload = requireJson(input.payload, 'payload');
    const parsed = parseHostMetadata(input.metadata);
    const oid = newId('obj');
    const namespace =
      input.namespace == null || input.namespace.trim() === '' ? processNamespace(ownerPid) : normalizeNamespace(input.namespace);
    const name = input.name == null || input.name === '' ? `${type}:${oid}` : normalizeName(input.name);
    const lookup = await lookupName(db, namespace, name);
    if (!lookup.namespaceExists) {
      const scope0 = processNamespace(ownerPid);
      if (!input.ensureNamespace || pathParent(namespace) !== scope0) {
        throw new LibosError('namespace_not_found', `namespace: ${JSON.stringify(namespace)} does not exist`, {
          details: { field: 'namespace', namespace },
        });
      }
      await createOwnedNamespace(ownerPid, namespace, scope0);
    }
    const parents = [...new Set(input.parentOids ?? [])];
    const parentLabels: DataLabels[] = [];
    const found = await lifecyclesAndLabels(db, parents);
    for (const parent of parents) {
      const record = found.get(parent);
      if (record === undefined || (record.lifecycle !== 'live' && record.lifecycle !== 'payload_unavailable')) {
        throw new LibosError('parent_not_found', `parentOids: no live Object ${JSON.stringify(parent)}`, {
          details: { field: 'parentOids', oid: parent },
        });
      }
      parentLabels.push(record.labels);
    }
    const hostLabels = Object.fromEntries(Object.entries(input.labels ?? {}).filter(([, v]) => v !== undefined));
    const own: DataLabels = { ...parsed.declared, ...hostLabels };
    const labels = requireValidLabels(mergeLabels(own, parentLabels), 'labels');
    const immutable = input.immutable ?? true;
    const holder = requireFreeName(await seenAfterReopen(db, deps.payloads, lookup.object, scope.runtime), namespace, name);
    const observed = observedParents(scope, deps.chains, { pid: ownerPid, oid, parents, sourceOids: input.sourceOids, immutable });
    await storeObject(scope, deps.payloads, {
      oid,
      namespace,
      name,
      type,
      holder,
      payload,
      immutable,
      metadata: parsed.descriptive,
      labels,
      provenance: observed.provenance('host.create_for_process', []),
      checkedParents: parents,
      observedSources: observed.count,
      ownerKind: input.owner?.kind ?? 'process',
      ownerId: input.owner?.id ?? ownerPid,
      createdBy: 'runtime',
      attachTo: input.attachToView === false ? null : ownerPid,
      action: 'object.create_for_process',
    });
    observed.stored();
    return { oid, namespace, name, type, version: 1 };
  }

  async function attachRoot(pid: string, oid: string): Promise<void> {
    if ((await getObject(db, oid)) === null) throw new LibosError('object_not_found', `attachRoot: no Object ${oid}`, { details: { oid } });
    const view = await ensureView(db, pid, 'read_only', 'attach_root', now());
    await addRoot(db, view.viewId, oid, null);
  }

  async function readPayload(oid: string): Promise<unknown> {
    const record = await getObject(db, oid);
    if (record === null || (record.lifecycle !== 'live' && record.lifecycle !== 'payload_unavailable')) {
      throw new LibosError('object_not_found', `no live Object ${oid}`, { details: { oid } });
    }
    return requirePayload(deps.payloads, record, scope.runtime);
  }

  const available = (r: Pick<ObjectRecord, 'oid' | 'lifecycle'>) => r.lifecycle === 'live' && deps.payloads.has(r.oid);

  async function describe(oid: string) {
    const r = await getObject(db, oid);
    if (r === null || (r.lifecycle !== 'live' && r.lifecycle !== 'payload_unavailable')) return null;
    return {
      oid: r.oid,
      namespace: r.namespace,
      name: r.name,
      type: r.type,
      version: r.version,
      labels: r.labels,
      payloadAvailable: available(r),
      ownerKind: r.ownerKind,
      ownerId: r.ownerId,
    };
  }

  async function link(
    srcOid: string,
    dstOid: string,
    relation: string,
    metadata: Readonly<Record<string, unknown>> = {},
  ): Promise<{ readonly link_id: string }> {
    const rel = typeof relation === 'string' ? relation.trim() : '';
    if (rel === '' || rel.length > 128)
      throw new LibosError('invalid_arguments', `relation: must be 1..128 characters (got ${JSON.stringify(relation)})`, {
        details: { field: 'relation' },
      });
    const src = await getObject(db, srcOid);
    const dst = await getObject(db, dstOid);
    for (const [field, oid, r] of [
      ['srcOid', srcOid, src],
      ['dstOid', dstOid, dst],
    ] as const) {
      if (r === null || (r.lifecycle !== 'live' && r.lifecycle !== 'payload_unavailable'))
        throw new LibosError('object_not_found', `${field}: no live Object ${oid}`, { details: { field, oid } });
    }
    const linkId = newId('link');
    await insertLink(db, {
      link_id: linkId,
      src_oid: srcOid,
      dst_oid: dstOid,
      relation: rel,
      metadata: JSON.stringify(requireJson(metadata, 'metadata')),
      created_at: now(),
    });
    await scope.events.emit('object_linked', {
      oid: srcOid,
      dst_oid: dstOid,
      relation: rel,
      link_id: linkId,
      version: src!.version,
      owner_id: src!.ownerId,
    });
    await scope.audit.record({
      action: 'object.link',
      target: resources.object(srcOid),
      decision: 'allow',
      details: { dst_oid: dstOid, relation: rel, link_id: linkId },
    });
    return { link_id: linkId };
  }

  async function linksFrom(oid: string): Promise<readonly ObjectLink[]> {
    return linksFromRepo(db, oid);
  }

  async function releaseEnded(pid: string): Promise<readonly string[]> {
    return releaseEndedImpl(scope, deps.payloads, pid);
  }

  async function lookup(namespace: string, name: string): Promise<ObjectRef | null> {
    const r = await findObjectByName(db, normalizeNamespace(namespace), normalizeName(name));
    return r === null ? null : { oid: r.oid, namespace: r.namespace, name: r.name, type: r.type, version: r.version };
  }

  async function inspect(oid: string): Promise<ObjectDescription | null> {
    const r = await seenAfterReopen(db, deps.payloads, await getObject(db, oid), scope.runtime);
    return r === null ? null : { ...r, provenance: await fullProvenance(db, r.provenance), payloadAvailable: available(r) };
  }

  async function renderView(pid: string, opts: { readonly tokenBudget?: number } = {}): Promise<ObjectRenderedView> {
    const view = await getView(db, pid);
    const roots = view === null ? [] : await viewRootObjects(db, view.viewId);
    const authority = scope.authorityFor(pid);
    const candidates: RootCandidate[] = [];
    for (const { oid, object: r } of roots) {
      const decision = await authority.check(resources.object(oid), 'materialize');
      const version = r?.version ?? null;
      if (!decision.allowed) candidates.push({ oid, version, unavailable: 'capability_denied' });
      else if (r === null || (r.lifecycle !== 'live' && r.lifecycle !== 'payload_unavailable'))
        candidates.push({ oid, version, unavailable: 'missing' });
      else if (!available(r)) candidates.push({ oid, version, unavailable: 'payload_unavailable' });
      else
        candidates.push({
          oid: r.oid,
          version: r.version,
          namespace: r.namespace,
          name: r.name,
          type: r.type,
          title: r.metadata.title,
          summary: r.metadata.summary,
          tags: r.metadata.tags,
          updatedAt: r.updatedAt,
          updatedSeq: r.updatedSeq,
          labels: r.labels,
          payload: deps.payloads.get(r.oid) as JsonValue,
          payloadText: () => deps.payloads.canonical(r.oid)?.text,
        });
    }
    const plan = planView(candidates, view?.filters ?? [], opts.tokenBudget ?? DEFAULT_VIEW_TOKEN_BUDGET);
    const text = plan.included.map((i) => i.text).join('\n');
    const labelSets = plan.included.map((i) => i.labels);
    return {
      text,
      tokens: plan.included.reduce((n, i) => n + i.tokens, 0),
      manifest: plan.manifest,
      labels: labelSets.length === 0 ? EMPTY_VIEW_LABELS : mergeLabels(labelSets[0]!, labelSets.slice(1)),
      sourceOids: plan.included.map((i) => i.oid),
    };
  }

  async function replacePayload(
    oid: string,
    payload: unknown,
    opts: {
      readonly expectedVersion: number;
      readonly labels?: Partial<DataLabels>;
      readonly tags?: readonly string[];
      readonly action?: string;
    },
  ): Promise<ObjectRef> {
    const record = await seenAfterReopen(db, deps.payloads, await getObject(db, oid), scope.runtime);
    if (record === null || (record.lifecycle !== 'live' && record.lifecycle !== 'payload_unavailable')) {
      throw new LibosError('object_not_found', `replacePayload: no live Object ${oid}`, { details: { oid } });
    }
    const value = requireJson(payload, 'payload');
    if (record.immutable)
      throw new LibosError('object_immutable', `replacePayload: ${record.namespace}/${record.name} is immutable`, { details: { oid } });
    await requirePayload(deps.payloads, record, scope.runtime);
    if (record.version !== opts.expectedVersion) {
      throw new LibosError(
        'version_conflict',
        `replacePayload: ${record.namespace}/${record.name} is at version ${record.version}, not ${opts.expectedVersion}; ` +
          `nothing was written`,
        {
          details: { oid, expected_version: opts.expectedVersion, version: record.version },
        },
      );
    }
    const size = jsonSize(value);
    if (size > MAX_PAYLOAD_SIZE) {
      throw new LibosError('payload_too_large', `payload: SIZE must be at most ${MAX_PAYLOAD_SIZE} (got ${size}); nothing was written`, {
        details: { oid, size, maximum: MAX_PAYLOAD_SIZE },
      });
    }
    const labels = requireValidLabels(mergeLabels(record.labels, opts.labels ? [{ ...record.labels, ...opts.labels }] : []), 'labels');
    const tags = [...new Set([...record.metadata.tags, ...(opts.tags ?? [])])];
    const metadata = { ...record.metadata, tags, token_estimate: tokenEstimate(value) };
    const written = await writeAppend(db, {
      oid,
      expectVersion: record.version,
      expectOwnerKind: record.ownerKind,
      expectOwnerId: record.ownerId,
      metadata,
      labels,
      provenance: record.provenance,
      at: now(),
    });
    if (!written)
      throw new LibosError(
        'version_conflict',
        `replacePayload: ${record.namespace}/${record.name} changed while writing; nothing was written`,
        { details: { oid } },
      );
    writePayload(scope, deps.payloads, oid, value);
    const version = record.version + 1;
    await scope.events.emit('object_replaced', { oid, namespace: record.namespace, name: record.name, version, owner_id: record.ownerId });
    await scope.audit.record({
      action: opts.action ?? 'object.replace',
      target: resources.object(oid),
      decision: 'allow',
      details: { version, size, tags, labels },
    });
    return { oid, namespace: record.namespace, name: record.name, type: record.type, version };
  }

  async function listViewRoots(pid: string) {
    const view = await getView(db, pid);
    if (view === null) return [];
    return (await viewRoots(db, view.viewId)).map((r) => ({ oid: r.oid, capabilityId: r.capabilityId }));
  }

  async function listObjects(
    q: { readonly namespace?: string; readonly ownerPid?: string; readonly limit?: number } = {},
  ): Promise<ObjectDescription[]> {
    const limit = q.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
      throw new LibosError('limit_out_of_range', `limit: must be an integer from 1 to 10000 (got ${limit})`);
    const namespace = q.namespace === undefined ? undefined : normalizeNamespace(q.namespace);
    const rows = await listVisibleObjects(db, {
      limit,
      ...(namespace !== undefined ? { namespace } : {}),
      ...(q.ownerPid !== undefined ? { ownerPid: q.ownerPid } : {}),
    });
    return (await allSeenAfterReopen(db, deps.payloads, rows, scope.runtime)).map((r) => ({ ...r, payloadAvailable: available(r) }));
  }

  async function replaceViewFilters(pid: string, filters: readonly ViewFilter[]): Promise<void> {
    const view = await ensureView(db, pid, 'read_only', 'set_filters', now());
    await setViewFilters(db, view.viewId, filters);
  }

  return {
    initProcess,
    createForProcess,
    attachRoot,
    readPayload,
    describe,
    lookup,
    renderView,
    replacePayload,
    link,
    linksFrom,
    releaseEnded,
    inspect,
    viewRoots: listViewRoots,
    listObjects,
    setViewFilters: replaceViewFilters,
  };
}

/** Labels of a view that materializes nothing: the bottom of the join (adds no restriction). */
const EMPTY_VIEW_LABELS: DataLabels = {
  sensitivity: 'public',
  trust_level: 'trusted',
  integrity: 'verified',
  origin: null,
  tenant: null,
  principal: null,
  declassification_authority: null,
};
