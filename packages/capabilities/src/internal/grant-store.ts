import { isId, preparedQuery, preparedQueryPerSize, type Effect, type Right } from '@libos/sdk';
import type { CapabilityRecord, CapabilityStatus } from '../capability-record.js';
import { coveringResources, type ParsedResource } from '../resource.js';
import { changed, hasMemo, parseJsonColumn, peekThrough, readThrough, T, writeThrough, type Db } from './store.js';

/** Row shape of `cap_grants`. */
export interface GrantRow {
  id: string;
  subject: string;
  resource: string;
  kind: string;
  rights: string;
  effect: string;
  issuer: string;
  issuer_cap_id: string | null;
  parent_cap_id: string | null;
  depth: number;
  max_depth: number | null;
  issued_at: string;
  expires_at: string | null;
  uses_remaining: number | null;
  status: string;
  revoke_cause: string | null;
  delegable: number;
  revocable: number;
  constraints: string;
  metadata: string;
  revoked_at: string | null;
}

export function recordFromRow(row: GrantRow): CapabilityRecord {
  return Object.freeze({
    id: row.id,
    subject: row.subject,
    resource: row.resource,
    rights: Object.freeze(parseJsonColumn<Right[]>(row.rights, 'cap_grants.rights')),
    effect: row.effect as Effect,
    issuer: row.issuer,
    issuerCapId: row.issuer_cap_id,
    parentCapId: row.parent_cap_id,
    depth: Number(row.depth),
    maxDepth: row.max_depth === null ? null : Number(row.max_depth),
    issuedAt: row.issued_at,
    expiresAt: row.expires_at,
    usesRemaining: row.uses_remaining === null ? null : Number(row.uses_remaining),
    status: row.status as CapabilityStatus,
    revokeCause: (row.revoke_cause as CapabilityRecord['revokeCause']) ?? null,
    delegable: Number(row.delegable) === 1,
    revocable: Number(row.revocable) === 1,
    constraints: Object.freeze(parseJsonColumn<Record<string, unknown>>(row.constraints, 'cap_grants.constraints')),
    metadata: Object.freeze(parseJsonColumn<Record<string, string>>(row.metadata, 'cap_grants.metadata')),
  });
}

export function rowFromRecord(r: CapabilityRecord, kind: string): GrantRow {
  return {
    id: r.id,
    subject: r.subject,
    resource: r.resource,
    kind,
    rights: JSON.stringify(r.rights),
    effect: r.effect,
    issuer: r.issuer,
    issuer_cap_id: r.issuerCapId,
    parent_cap_id: r.parentCapId,
    depth: r.depth,
    max_depth: r.maxDepth,
    issued_at: r.issuedAt,
    expires_at: r.expiresAt,
    uses_remaining: r.usesRemaining,
    status: r.status,
    revoke_cause: r.revokeCause,
    delegable: r.delegable ? 1 : 0,
    revocable: r.revocable ? 1 : 0,
    constraints: JSON.stringify(r.constraints),
    metadata: JSON.stringify(r.metadata),
    revoked_at: null,
  };
}

/** The columns of a grant row, in the order `rowFromRecord` names them (`satisfies`: every one, and no other). */
const GRANT_COLUMNS = Object.keys({
  id: true,
  subject: true,
  resource: true,
  kind: true,
  rights: true,
  effect: true,
  issuer: true,
  issuer_cap_id: true,
  parent_cap_id: true,
  depth: true,
  max_depth: true,
  issued_at: true,
  expires_at: true,
  uses_remaining: true,
  status: true,
  revoke_cause: true,
  delegable: true,
  revocable: true,
  constraints: true,
  metadata: true,
  revoked_at: true,
} satisfies Record<keyof GrantRow, true>) as (keyof GrantRow)[];

/** A grant's insert, compiled once per store (each Object a process creates adds its owner's grant). */
const INSERT_GRANT = preparedQuery(GRANT_COLUMNS.length, (db: Db, args) =>
  db.insertInto(T.grants).values(Object.fromEntries(GRANT_COLUMNS.map((c, i) => [c, args[i]]))),
);

/**
 * Inserts `record`. When the memo holds its subject's rows read whole (K-9.28), the set the insert leaves is written
 * through (K-9.30): a process granted something (by the host, its parent, or a plugin: Object Memory's grant on a new
 * namespace of its own) does not read its grants again at its next check.
 */
export async function insertGrant(db: Db, record: CapabilityRecord, kind: string): Promise<void> {
  const row = rowFromRecord(record, kind);
  const args = GRANT_COLUMNS.map((c) => row[c]);
  const key = subjectKey(record.subject);
  const before = peekThrough<SubjectSet>(db, [T.grants], key);
  await db.executeQuery(INSERT_GRANT(db, args));
  const after = before ? withNewest(before, row) : null;
  if (after) writeThrough(db, [T.grants], key, after);
}

/** The memo key of a subject's rows read whole. */
const subjectKey = (subject: string) => `grants:${subject}`;

/** A subject's rows read whole (frozen, oldest first), or null for a subject with more than the bound. */
type SubjectSet = readonly CapabilityRecord[] | null;

/**
 * The set `rows` becomes with `row` inserted, or null when that cannot be told without reading: the set would pass
 * the bound, or `row` does not sort last in the store's `order by issued_at, id`. A row issued in the same millisecond
 * sorts last only when both ids are plain `cap_<16 hex>` and the new one is greater: such ids order alike in every
 * collation (PostgreSQL's need not be JavaScript's for other text); a clock set back puts the row elsewhere.
 */
function withNewest(rows: readonly CapabilityRecord[], row: GrantRow): readonly CapabilityRecord[] | null {
  if (rows.length >= SUBJECT_READ_WHOLE_MOST) return null;
  // Oldest first: only the rows from the newest back to the first one older than `row` can sort after it.
  for (let i = rows.length - 1; i >= 0; i--) {
    const r = rows[i]!;
    if (r.issuedAt < row.issued_at) break;
    if (r.issuedAt > row.issued_at || !isId(r.id, 'cap') || !isId(row.id, 'cap') || r.id >= row.id) return null;
  }
  return Object.freeze([...rows, recordFromRow(row)]);
}

const GRANT_BY_ID = preparedQuery(1, (db: Db, [id]) => db.selectFrom(T.grants).selectAll().where('id', '=', id!));

export async function getGrant(db: Db, id: string): Promise<CapabilityRecord | null> {
  const row = (await db.executeQuery(GRANT_BY_ID(db, [id]))).rows[0] as GrantRow | undefined;
  return row ? recordFromRow(row) : null;
}

/** Active records of one subject (optionally of one resource kind). */
export async function activeGrantsOf(db: Db, subject: string, kind?: string): Promise<CapabilityRecord[]> {
  let q = db.selectFrom(T.grants).selectAll().where('subject', '=', subject).where('status', '=', 'active');
  if (kind !== undefined) q = q.where('kind', '=', kind);
  const rows = (await q.execute()) as GrantRow[];
  return rows.map(recordFromRow);
}

/**
 * Subjects with at most this many rows in `cap_grants` (any status) are read whole, once per change of the table, and
 * matched in memory (K-9.28): a process that checks many resources (each Object it appends to, each tool of a step)
 * pays one read, not one per resource. A larger subject keeps the index probes, after one read of the bound's rows
 * that finds it large (remembered for the life of the process). The read names no status: on SQLite
 * `status = ? or id like ?` made it cost as much as two probes.
 */
const SUBJECT_READ_WHOLE_MOST = 64;

/** Subjects found to have more rows than that (a hint only: a stale entry just means a probe). */
const LARGE_SUBJECTS = new Set<string>();
const LARGE_SUBJECTS_MOST = 50_000;

/** The rows of a subject, oldest first, one more than `SUBJECT_READ_WHOLE_MOST` at most. */
const SUBJECT_GRANTS = preparedQuery(1, (db: Db, [subject]) =>
  db
    .selectFrom(T.grants)
    .selectAll()
    .where('subject', '=', subject!)
    .orderBy('issued_at')
    .orderBy('id')
    .limit(SUBJECT_READ_WHOLE_MOST + 1),
);

/**
 * The records of `subject` (frozen, oldest first), or null when it has more than the bound or `db` has no memo to keep
 * them in (read each time, the whole set would cost more than the probes).
 */
function subjectGrants(db: Db, subject: string): Promise<SubjectSet> {
  if (!hasMemo(db) || LARGE_SUBJECTS.has(subject)) return Promise.resolve(null);
  return readThrough(db, [T.grants], subjectKey(subject), async (): Promise<SubjectSet> => {
    const rows = (await db.executeQuery(SUBJECT_GRANTS(db, [subject]))).rows as GrantRow[];
    if (rows.length <= SUBJECT_READ_WHOLE_MOST) return Object.freeze(rows.map(recordFromRow));
    if (LARGE_SUBJECTS.size >= LARGE_SUBJECTS_MOST) LARGE_SUBJECTS.clear();
    LARGE_SUBJECTS.add(subject);
    return null;
  });
}

/**
 * Stored records of `subject` that can cover `resource` (a record whose resource is one of `coveringResources`):
 * active records, plus the record `alsoId` in any status (a stored row that replaces an implicit owner record). Oldest
 * first. A subject with few rows is matched in memory (`SUBJECT_READ_WHOLE_MOST`); else a probe of the (subject,
 * resource) index per covering pattern, so the cost does not grow with the subject's other grants.
 */
export function grantsCovering(db: Db, subject: string, resource: ParsedResource, alsoId?: string): Promise<CapabilityRecord[]> {
  // The covering patterns are a function of the canonical resource: the key names that, and a hit builds none.
  const key = `grants:${subject}\n${resource.canonical}\n${alsoId ?? ''}`;
  return readThrough(db, [T.grants], key, async () => {
    const covering = coveringResources(resource);
    const whole = await subjectGrants(db, subject);
    if (whole) {
      const wanted = new Set(covering);
      return Object.freeze(whole.filter((r) => wanted.has(r.resource) && (r.status === 'active' || r.id === alsoId))) as CapabilityRecord[];
    }
    const args = alsoId === undefined ? [subject, ...covering] : [subject, ...covering, alsoId];
    const rows = (await db.executeQuery(coveringQuery(covering.length, alsoId !== undefined)(db, args))).rows as GrantRow[];
    // Shared through the memo: frozen, so no reader changes what the next one reads.
    return Object.freeze(rows.map(recordFromRow)) as CapabilityRecord[];
  });
}

/** The query of `grantsCovering` for each number of patterns, with or without `alsoId`, compiled once per store. */
const coveringBy = (withId: boolean) =>
  preparedQueryPerSize(
    (patterns) => 1 + patterns + (withId ? 1 : 0),
    (db: Db, args, patterns) =>
      db
        .selectFrom(T.grants)
        .selectAll()
        .where('subject', '=', args[0]!)
        .where('resource', 'in', args.slice(1, 1 + patterns))
        .where((eb) => (withId ? eb.or([eb('status', '=', 'active'), eb('id', '=', args[1 + patterns]!)]) : eb('status', '=', 'active')))
        .orderBy('issued_at')
        .orderBy('id'),
  );
const COVERING = coveringBy(false);
const COVERING_WITH_ID = coveringBy(true);
const coveringQuery = (patterns: number, withId: boolean) => (withId ? COVERING_WITH_ID : COVERING)(patterns);

export async function allGrantsOf(db: Db, subject: string): Promise<CapabilityRecord[]> {
  const rows = (await db
    .selectFrom(T.grants)
    .selectAll()
    .where('subject', '=', subject)
    .orderBy('issued_at')
    .orderBy('id')
    .execute()) as GrantRow[];
  return rows.map(recordFromRow);
}

/**
 * Compare-and-set: spends `n` uses when the record is active and has at least `n`.
 * Reaching 0 marks it revoked/exhausted. Returns the uses left, or null when the CAS missed.
 */
export async function casSpend(db: Db, id: string, n: number, nowIso: string): Promise<number | null> {
  const res = await db
    .updateTable(T.grants)
    .set((eb) => ({ uses_remaining: eb('uses_remaining', '-', n) }))
    .where('id', '=', id)
    .where('status', '=', 'active')
    .where('uses_remaining', '>=', n)
    .executeTakeFirst();
  if (changed(res) !== 1) return null;
  const row = (await db.selectFrom(T.grants).select('uses_remaining').where('id', '=', id).executeTakeFirstOrThrow()) as {
    uses_remaining: number;
  };
  const left = Number(row.uses_remaining);
  if (left === 0) {
    await db.updateTable(T.grants).set({ status: 'revoked', revoke_cause: 'exhausted', revoked_at: nowIso }).where('id', '=', id).execute();
  }
  return left;
}
