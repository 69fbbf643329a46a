import type { ServiceScope } from '@libos/sdk';
import type { CapabilityRecord } from '../capability-record.js';
import { isExpired } from '../expiry.js';
import type { EngineEnv } from './env.js';
import { allGrantsOf, validChain } from './grant-store.js';
import { dbOf } from './store.js';

/** Grants of a subject; by default only active, unexpired, chain-valid ones. */
export async function listImpl(env: EngineEnv, scope: ServiceScope, subject: string, includeInactive: boolean): Promise<CapabilityRecord[]> {
  const db = dbOf(scope);
  const all = await allGrantsOf(db, subject);
  if (includeInactive) return all;
  const now = env.clock.now();
  const cache = new Map<string, CapabilityRecord | null>();
  const out: CapabilityRecord[] = [];
  for (const r of all) if (r.status === 'active' && !isExpired(r.expiresAt, now) && (await validChain(db, r, now, cache))) out.push(r);
  return out;
}
