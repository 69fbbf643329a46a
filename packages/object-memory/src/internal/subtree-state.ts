import {
  LibosError,
  type ServiceScope,
  type StateBlob,
  type StateForkContext,
  type StateItem,
  type StatePart,
  type StateRestoreContext,
  type Subtree,
  type SubtreeStateContributor,
} from '@libos/sdk';
import type { PayloadStore } from '../payload-store.js';
import { releaseObjects } from './release.js';
import {
  PAYLOAD_LOST_MARKER,
  PAYLOAD_PRESENT_MARKER,
  type LinkTable,
  type NamespaceTable,
  type ObjectTable,
  type OmDb,
  type ViewRootTable,
  type ViewTable,
} from './schema.js';
import { writePayload } from './payload-writes.js';
import { fullProvenance } from './observed-chain.js';
import type { Provenance } from '../object-record.js';
import { sql } from 'kysely';
import { ID_BODY_SOURCE, namespaces as nsNames, resources } from '@libos/sdk';

/**
 * Object Memory's share of checkpoints (key `objects`). What a subtree owns: the process scopes of its pids
 * (`process:<pid>` and below) and the namespaces its pids created; the Objects its pids own (results included) and
 * the task results kept in its process scopes, in any lifecycle; their payloads (as blobs, one per live Object whose
 * payload this runtime holds); the pids' MemoryViews (a root the subtree does not own is kept as a reference only);
 * and the links leaving those Objects.
 *
 * Restore: an Object the subtree got since is released; each captured Object gets its captured row back (version,
 * labels, lifecycle, owner) and, when its payload was captured, that payload (hash-checked by the checkpoint), so a
 * payload lost at a reopen comes back; views and links are put back as captured; a namespace made since is dropped
 * when nothing lives in it. Fork copies the Objects of the process scopes under new oids and namespaces; namespaces
 * outside process scopes are global names and are not copied.
 */

interface ObjectsPart {
  readonly version: 1;
  readonly namespaces: readonly NamespaceTable[];
  readonly objects: readonly ObjectTable[];
  readonly views: readonly ViewTable[];
  readonly roots: readonly ViewRootTable[];
  readonly links: readonly LinkTable[];
}

const VISIBLE = ['live', 'payload_unavailable'];
const NEXT_SEQ = sql<number>`(select coalesce(max(updated_seq), 0) + 1 from om_objects)`;

const partOf = (part: StatePart): ObjectsPart => {
  const d = part.data as ObjectsPart | undefined;
  if (d?.version !== 1 || !Array.isArray(d.objects))
    throw new LibosError('internal_error', 'objects: the checkpoint part is not a version 1 Object Memory part');
  return d;
};

const blobRef = (oid: string) => `object:${oid}`;

/** A process's own namespace or one under it: `process:<pid>` or `process:<pid>/...`. */
const PROCESS_SCOPE = new RegExp(`^process:(pid_${ID_BODY_SOURCE})(?:/|$)`);

/** The process scope's pid of a namespace (`process:<pid>` or below), or null. */
function scopePid(namespace: string): string | null {
  const m = PROCESS_SCOPE.exec(namespace);
  return m ? m[1]! : null;
}

async function chunked<R>(pids: readonly string[], fn: (chunk: string[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < pids.length; i += 400) out.push(...(await fn(pids.slice(i, i + 400))));
  return out;
}

/** The namespaces and Objects a subtree owns now. */
async function scoped(db: OmDb, pids: readonly string[]): Promise<{ namespaces: NamespaceTable[]; objects: ObjectTable[] }> {
  const set = new Set(pids);
  const namespaces = (
    await chunked(pids, (c) =>
      db
        .selectFrom('om_namespaces')
        .selectAll()
        .where((eb) =>
          eb.or([
            eb('created_by', 'in', c),
            ...c.flatMap((p) => [eb('namespace', '=', nsNames.process(p)), eb('namespace', 'like', `process:${p}/%`)]),
          ]),
        )
        .execute(),
    )
  ).filter((n, i, all) => all.findIndex((m) => m.namespace === n.namespace) === i);
  const processScopes = namespaces.map((n) => n.namespace).filter((ns) => scopePid(ns) !== null && set.has(scopePid(ns)!));
  const owned = await chunked(pids, (c) =>
    db.selectFrom('om_objects').selectAll().where('owner_id', 'in', c).where('owner_kind', 'in', ['process', 'process_result']).execute(),
  );
  const results = await chunked(processScopes, (c) =>
    db.selectFrom('om_objects').selectAll().where('namespace', 'in', c).where('owner_kind', '=', 'object_task').execute(),
  );
  const objects = [...owned, ...results].filter((o, i, all) => all.findIndex((x) => x.oid === o.oid) === i);
  objects.sort((a, b) => Number(a.updated_seq) - Number(b.updated_seq));
  namespaces.sort((a, b) => (a.namespace < b.namespace ? -1 : 1));
  return { namespaces, objects };
}

export function objectsState(payloads: PayloadStore): SubtreeStateContributor {
  return {
    key: 'objects',

    async capture(scope: ServiceScope, subtree: Subtree): Promise<StatePart> {
      const db = scope.store as OmDb;
      const { namespaces, objects } = await scoped(db, subtree.pids);
      const views = await chunked(subtree.pids, (c) => db.selectFrom('om_views').selectAll().where('owner_pid', 'in', c).execute());
      const roots = await chunked(
        views.map((v) => v.view_id),
        (c) => db.selectFrom('om_view_roots').selectAll().where('view_id', 'in', c).execute(),
      );
      const links = await chunked(
        objects.map((o) => o.oid),
        (c) => db.selectFrom('om_links').selectAll().where('src_oid', 'in', c).execute(),
      );
      const blobs: StateBlob[] = [];
      for (const o of objects) {
        if (o.lifecycle_state === 'live' && payloads.has(o.oid)) blobs.push({ ref: blobRef(o.oid), value: payloads.get(o.oid) });
      }
      const data: ObjectsPart = { version: 1, namespaces, objects, views, roots, links };
      return { data, blobs };
    },

    describe(part: StatePart): readonly StateItem[] {
      return partOf(part).objects.map((o) => ({
        kind: 'object',
        id: o.oid,
        state: {
          namespace: o.namespace,
          name: o.name,
          type: o.type,
          version: Number(o.version),
          lifecycle: o.lifecycle_state,
          owner_id: o.owner_id,
        },
      }));
    },

    async restore(scope: ServiceScope, subtree: Subtree, part: StatePart, ctx: StateRestoreContext): Promise<void> {
      const db = scope.store as OmDb;
      const d = partOf(part);
      const now = scope.clock.now().toISOString();
      const captured = new Map(d.objects.map((o) => [o.oid, o]));
      const current = await scoped(db, subtree.pids);
      // What the subtree got since the capture goes first (its names may be the captured ones').
      const later = current.objects.filter((o) => !captured.has(o.oid) && VISIBLE.includes(o.lifecycle_state)).map((o) => o.oid);
      await releaseObjects(scope, payloads, later, `checkpoint ${ctx.checkpointId} restored`);
      const ns = new Set(d.namespaces.map((n) => n.namespace));
      for (const n of d.namespaces) {
        const r = await db
          .updateTable('om_namespaces')
          .set({ parent_namespace: n.parent_namespace, metadata: n.metadata, updated_at: n.updated_at })
          .where('namespace', '=', n.namespace)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) === 0) await db.insertInto('om_namespaces').values(n).execute();
      }
      const rehydrated: string[] = [];
      const unavailable: string[] = [];
      // Rows leave their name before any takes one back (a captured name may be held by a captured row's successor).
      for (const o of d.objects)
        await db
          .updateTable('om_objects')
          .set({ lifecycle_state: 'superseded' })
          .where('oid', '=', o.oid)
          .where('lifecycle_state', 'in', VISIBLE)
          .execute();
      for (const o of d.objects) {
        let lifecycle = o.lifecycle_state;
        let marker = o.payload;
        if (lifecycle === 'live') {
          if (ctx.blobs.has(blobRef(o.oid))) {
            writePayload(scope, payloads, o.oid, ctx.blobs.get(blobRef(o.oid)));
            marker = PAYLOAD_PRESENT_MARKER;
            rehydrated.push(o.oid);
          } else {
            lifecycle = 'payload_unavailable';
            marker = PAYLOAD_LOST_MARKER;
            unavailable.push(o.oid);
          }
        } else if (payloads.has(o.oid)) {
          const previous = payloads.get(o.oid);
          payloads.delete(o.oid);
          scope.onRollback(() => payloads.set(o.oid, previous));
        }
        // A payload written here now is held by this runtime; a captured row's instance is another (gone) runtime's.
        const held = marker === PAYLOAD_PRESENT_MARKER && payloads.has(o.oid) ? (scope.runtime?.instanceId ?? null) : null;
        const row = { ...o, lifecycle_state: lifecycle, payload: marker, updated_seq: NEXT_SEQ, payload_instance: held };
        const r = await db.updateTable('om_objects').set(row).where('oid', '=', o.oid).executeTakeFirst();
        if (Number(r.numUpdatedRows) === 0) await db.insertInto('om_objects').values(row).execute();
      }
      // Views of the subtree's pids, as captured.
      const viewIds = (
        await chunked(subtree.pids, (c) => db.selectFrom('om_views').select('view_id').where('owner_pid', 'in', c).execute())
      ).map((v) => v.view_id);
      for (const ids of chunk(viewIds)) {
        await db.deleteFrom('om_view_roots').where('view_id', 'in', ids).execute();
        await db.deleteFrom('om_views').where('view_id', 'in', ids).execute();
      }
      for (const v of d.views) await db.insertInto('om_views').values(v).execute();
      for (const r of d.roots) await db.insertInto('om_view_roots').values(r).execute();
      // Links leaving the subtree's Objects, as captured.
      const sources = [...new Set([...current.objects.map((o) => o.oid), ...d.objects.map((o) => o.oid)])];
      for (const ids of chunk(sources)) await db.deleteFrom('om_links').where('src_oid', 'in', ids).execute();
      for (const l of d.links) await db.insertInto('om_links').values(l).execute();
      // A namespace made since, with nothing left in it, goes.
      const dropped: string[] = [];
      for (const n of current.namespaces) {
        // A process's own scope stays with its process row (rows are never deleted; a later process is only ended).
        if (ns.has(n.namespace) || subtree.pids.some((p) => n.namespace === nsNames.process(p))) continue;
        const alive = await db
          .selectFrom('om_objects')
          .select('oid')
          .where('namespace', '=', n.namespace)
          .where('lifecycle_state', 'in', VISIBLE)
          .executeTakeFirst();
        const child = await db
          .selectFrom('om_namespaces')
          .select('namespace')
          .where('parent_namespace', '=', n.namespace)
          .executeTakeFirst();
        if (alive || (child && !current.namespaces.some((m) => m.namespace === child.namespace))) continue;
        dropped.push(n.namespace);
      }
      for (const n of dropped.sort((a, b) => b.length - a.length))
        await db.deleteFrom('om_namespaces').where('namespace', '=', n).execute();
      await scope.audit.record({
        action: 'object.checkpoint_restore',
        target: resources.process(subtree.rootPid),
        decision: 'restored',
        details: {
          checkpoint_id: ctx.checkpointId,
          objects: d.objects.length,
          rehydrated: rehydrated.length,
          released: later.length,
          namespaces_dropped: dropped,
          at: now,
        },
      });
      ctx.report({
        restored_objects: d.objects.length,
        rehydrated_payloads: rehydrated,
        payloads_unavailable: unavailable,
        released_objects: later,
        dropped_namespaces: dropped,
      });
    },

    async fork(scope: ServiceScope, _subtree: Subtree, part: StatePart, ctx: StateForkContext): Promise<void> {
      const db = scope.store as OmDb;
      const d = partOf(part);
      const now = scope.clock.now().toISOString();
      /** The forked name of a namespace in a forked pid's process scope, else undefined. */
      const forkedNs = (ns: string): string | undefined => {
        const pid = scopePid(ns);
        const to = pid ? ctx.renamed(pid) : undefined;
        return pid && to ? ns.replace(nsNames.process(pid), nsNames.process(to)) : undefined;
      };
      const rename = (id: string) => ctx.renamed(id) ?? id;
      const notForked: string[] = [];
      for (const n of d.namespaces) {
        const to = forkedNs(n.namespace);
        if (to === undefined) {
          notForked.push(n.namespace);
          continue;
        }
        await db
          .insertInto('om_namespaces')
          .values({
            ...n,
            namespace: to,
            parent_namespace: n.parent_namespace === null ? null : (forkedNs(n.parent_namespace) ?? n.parent_namespace),
            created_by: rename(n.created_by),
            created_at: now,
            updated_at: now,
          })
          .execute();
      }
      const copied: string[] = [];
      const expanded = new Map<string, readonly string[]>(); // full parents of chained Objects (OM-77.3), shared
      for (const o of d.objects) {
        const ns = forkedNs(o.namespace);
        if (ns === undefined || !VISIBLE.includes(o.lifecycle_state)) continue;
        const oid = ctx.rename(o.oid);
        const nsPid = ctx.renamed(scopePid(o.namespace)!)!;
        const ownerId = o.owner_kind === 'object_task' ? nsPid : rename(o.owner_id);
        const ownerKind = o.owner_kind === 'object_task' ? 'process' : o.owner_kind;
        const has = o.lifecycle_state === 'live' && ctx.blobs.has(blobRef(o.oid));
        // A copy names its parents in full: the Object a `parents_from` chain names may not be copied.
        const provenance = await fullProvenance(db, JSON.parse(o.provenance) as Provenance, expanded);
        await db
          .insertInto('om_objects')
          .values({
            ...o,
            oid,
            namespace: ns,
            owner_kind: ownerKind,
            owner_id: ownerId,
            created_by: rename(o.created_by),
            lifecycle_state: has ? 'live' : 'payload_unavailable',
            payload: has ? PAYLOAD_PRESENT_MARKER : PAYLOAD_LOST_MARKER,
            payload_instance: has ? (scope.runtime?.instanceId ?? null) : null,
            provenance: JSON.stringify({ ...provenance, parent_oids: (provenance.parent_oids ?? []).map(rename), forked_from: o.oid }),
            created_at: now,
            updated_at: now,
            updated_seq: NEXT_SEQ,
          })
          .execute();
        if (has) writePayload(scope, payloads, oid, ctx.blobs.get(blobRef(o.oid)));
        copied.push(o.oid);
      }
      const views = new Map<string, string>();
      for (const v of d.views) {
        const owner = ctx.renamed(v.owner_pid);
        if (owner === undefined) continue;
        const viewId = ctx.rename(v.view_id);
        views.set(v.view_id, owner);
        await db
          .insertInto('om_views')
          .values({ ...v, view_id: viewId, owner_pid: owner, created_from: 'fork_checkpoint', created_at: now })
          .execute();
      }
      for (const r of d.roots) {
        if (!views.has(r.view_id)) continue;
        const oid = ctx.renamed(r.oid);
        // A copied root is the fork's own Object (its owner record); a borrowed one stays a plain reference.
        await db
          .insertInto('om_view_roots')
          .values({
            view_id: ctx.rename(r.view_id),
            oid: oid ?? r.oid,
            position: r.position,
            capability_id: oid ? `cap_own:object:${oid}` : null,
          })
          .execute();
      }
      for (const l of d.links) {
        const src = ctx.renamed(l.src_oid);
        if (src === undefined) continue;
        await db
          .insertInto('om_links')
          .values({ ...l, link_id: ctx.rename(l.link_id), src_oid: src, dst_oid: rename(l.dst_oid), created_at: now })
          .execute();
      }
      await scope.audit.record({
        action: 'object.fork_checkpoint',
        target: resources.process(ctx.rootPid),
        decision: 'ok',
        details: { checkpoint_id: ctx.checkpointId, objects: copied.length, not_forked_namespaces: notForked },
      });
      ctx.report({ forked_objects: Object.fromEntries(copied.map((o) => [o, ctx.rename(o)])), not_forked_namespaces: notForked });
    },
  };
}

function chunk(ids: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < ids.length; i += 400) out.push(ids.slice(i, i + 400));
  return out;
}
