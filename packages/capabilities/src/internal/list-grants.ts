import type { ServiceScope } from '@libos/sdk';
import type { CapabilityRecord } from '../capability-record.js';
import { isExpired } from '../expiry.js';
import type { EngineEnv } from './env.js';
import { allGrantsOf } from './grant-store.js';
import { ownerRecordsOf } from './owner-grants.js';
import { validChain } from './record-lookup.js';
import { dbOf } from './store.js';

const byIssue = (a: CapabilityRecord, b: CapabilityRecord): number =>
  a.issuedAt !== b.issuedAt ? (a.issuedAt < b.issuedAt ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/**
 * Grants of a subject, oldest first: its stored records and the implicit owner records of what it owns (unless a
 * stored row replaces one, e.g. a revoked owner record); by default only active, unexpired, chain-valid ones.
 */
export async function listImpl(
  env: EngineEnv,
  scope: ServiceScope,
  subject: string,
  includeInactive: boolean,
): Promise<CapabilityRecord[]> {
  const db = dbOf(scope);
  const stored = await allGrantsOf(db, subject);
  const implicit = await ownerRecordsOf(env.owners, db, subject, new Set(stored.map((r) => r.id)));
  const all = implicit.length === 0 ? stored : [...stored, ...implicit].sort(byIssue);
  if (includeInactive) return all;
  const now = env.clock.now();
  const cache = new Map<string, CapabilityRecord | null>();
  const out: CapabilityRecord[] = [];
  for (const r of all) {
    if (r.status === 'active' && !isExpired(r.expiresAt, now) && (await validChain(env.owners, db, r, now, cache))) out.push(r);
  }
  return out;
}
