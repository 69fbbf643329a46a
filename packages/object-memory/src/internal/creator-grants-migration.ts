import type { StoreDialect } from '@libos/sdk';
import { type Kysely, sql } from 'kysely';
import { creatorRights } from './object-owners.js';

/** The metadata every stored creator grant carried (JSON text exactly as it was written). */
const CREATOR_METADATA = JSON.stringify({ granted_by: '@libos/object-memory', reason: 'creator handle' });
const CHUNK = 500;

interface CreatorGrantRow {
  id: string;
  subject: string;
  resource: string;
  rights: string;
  effect: string;
  issuer: string;
  status: string;
  uses_remaining: number | null;
  expires_at: string | null;
  max_depth: number | null;
  delegable: number;
  revocable: number;
  constraints: string;
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

const sameRights = (json: string, immutable: boolean): boolean => {
  const want = [...creatorRights(immutable)].sort();
  const have = (JSON.parse(json) as string[]).slice().sort();
  return have.length === want.length && have.every((r, i) => r === want[i]);
};

/**
 * Whether the store's own schema has table `name`. Not kysely's introspection: on PostgreSQL it lists the tables of
 * every schema in the database (another store's `cap_grants` would count) and fails when another schema is dropped
 * while it reads the catalog.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function hasTable(db: Kysely<any>, dialect: StoreDialect, name: string): Promise<boolean> {
  if (dialect === 'postgres') {
    const { rows } = await sql<{ t: string | null }>`select to_regclass(${name}) as t`.execute(db);
    return rows[0]?.t != null;
  }
  const rows = await db.selectFrom('sqlite_master').select('name').where('type', '=', 'table').where('name', '=', name).execute();
  return rows.length > 0;
}

/**
 * Stores written before owners' rights were derived from ownership hold one creator grant per Object. Each one
 * that still matches its Object's owner becomes the implicit owner record `cap_own:object:<oid>`, so decisions stay
 * the same: an active grant that says exactly what ownership derives is deleted (the implicit record replaces it);
 * any other (revoked, or changed) keeps its row under the new id, which then replaces the implicit record (a
 * relinquished creator grant stays relinquished). Records derived from it and view roots naming it follow the
 * new id. Runs once, in the open's migration transaction, after the authority engine's migrations.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function creatorGrantsToOwnership(db: Kysely<any>, dialect: StoreDialect): Promise<void> {
  if (!(await hasTable(db, dialect, 'cap_grants'))) return; // no authority engine tables: nothing stored
  const grants = (await db
    .selectFrom('cap_grants')
    .select([
      'id',
      'subject',
      'resource',
      'rights',
      'effect',
      'issuer',
      'status',
      'uses_remaining',
      'expires_at',
      'max_depth',
      'delegable',
      'revocable',
      'constraints',
    ])
    .where('kind', '=', 'object')
    .where('metadata', '=', CREATOR_METADATA)
    .where('parent_cap_id', 'is', null)
    .execute()) as CreatorGrantRow[];
  const renamed = new Map<string, string>();
  for (const part of chunks(grants)) {
    const oids = part.map((g) => g.resource.slice('object:'.length));
    const objects = (await db.selectFrom('om_objects').select(['oid', 'owner_id', 'immutable']).where('oid', 'in', oids).execute()) as {
      oid: string;
      owner_id: string;
      immutable: number;
    }[];
    const byOid = new Map(objects.map((o) => [o.oid, o]));
    for (const g of part) {
      const o = byOid.get(g.resource.slice('object:'.length));
      if (!o || o.owner_id !== g.subject || g.issuer !== g.subject) continue;
      const id = `cap_own:${g.resource}`;
      const implicit =
        g.status === 'active' &&
        g.effect === 'allow' &&
        g.uses_remaining === null &&
        g.expires_at === null &&
        g.max_depth === null &&
        Number(g.delegable) === 0 &&
        Number(g.revocable) === 1 &&
        g.constraints === '{}' &&
        sameRights(g.rights, Number(o.immutable) === 1);
      if (implicit) await db.deleteFrom('cap_grants').where('id', '=', g.id).execute();
      else await db.updateTable('cap_grants').set({ id }).where('id', '=', g.id).execute();
      renamed.set(g.id, id);
    }
  }
  if (renamed.size === 0) return;
  for (const part of chunks([...renamed.keys()])) {
    const children = (await db
      .selectFrom('cap_grants')
      .select(['id', 'parent_cap_id', 'issuer_cap_id'])
      .where((eb) => eb.or([eb('parent_cap_id', 'in', part), eb('issuer_cap_id', 'in', part)]))
      .execute()) as {
      id: string;
      parent_cap_id: string | null;
      issuer_cap_id: string | null;
    }[];
    for (const c of children) {
      const parent = c.parent_cap_id === null ? null : (renamed.get(c.parent_cap_id) ?? c.parent_cap_id);
      const issuer = c.issuer_cap_id === null ? null : (renamed.get(c.issuer_cap_id) ?? c.issuer_cap_id);
      await db.updateTable('cap_grants').set({ parent_cap_id: parent, issuer_cap_id: issuer }).where('id', '=', c.id).execute();
    }
    const roots = (await db
      .selectFrom('om_view_roots')
      .select(['view_id', 'oid', 'capability_id'])
      .where('capability_id', 'in', part)
      .execute()) as { view_id: string; oid: string; capability_id: string }[];
    for (const r of roots) {
      await db
        .updateTable('om_view_roots')
        .set({ capability_id: renamed.get(r.capability_id)! })
        .where('view_id', '=', r.view_id)
        .where('oid', '=', r.oid)
        .execute();
    }
  }
}
