import {
  LibosError,
  type ServiceScope,
  type StateForkContext,
  type StateItem,
  type StatePart,
  type StateRestoreContext,
  type Subtree,
  type SubtreeStateContributor,
} from '@libos/sdk';
import type { BudgetLimits } from '../budgets.js';
import { budgetEngine } from '../budgets.js';
import { parseResource } from '../resource.js';
import { audit, type EngineEnv } from './env.js';
import { grantedEvent } from './grant-publish.js';
import { recordFromRow, type GrantRow } from './grant-store.js';
import { OWNER_CAP_PREFIX } from './owner-grants.js';
import { changed, dbOf, parseJsonColumn, T, type Db } from './store.js';
import { ID_BODY_SOURCE } from '@libos/sdk';

/**
 * The authority engine's share of checkpoints (`SubtreeStateContributor`, key `capabilities`): the stored grants
 * held by the subtree's pids (any status), their budget accounts and active provider envelopes, their flow labels
 * with their observed sources, and their bound manifests.
 *
 * Restore keeps the engine's promises: a grant the subtree got after the capture is revoked (cause explicit, reason
 * `checkpoint_restore`), but a grant revoked or exhausted since stays so and a finite grant keeps its current uses
 * (never refunded); grants on `checkpoint:` resources are the checkpoint history's own (append-only) and are kept.
 * Budget usage is never refunded either: an account only gets its captured status back (a restored live process
 * needs an open account). Flow labels never go down, so the current ones stay.
 *
 * Fork copies to the renamed pids: accounts with their captured limits (the new root is a root), labels (the current
 * high-water), manifests, and every grant active at the capture and still active now except finite ones and
 * implicit owner records (ownership follows the copied Objects); a grant on a renamed resource is issued by the host,
 * any other is derived from its original (revoking the original revokes the copy).
 */

interface AccountRow {
  pid: string;
  parent_pid: string | null;
  ancestors: string;
  limits: string;
  usage: string;
  reserved: string;
  status: string;
  opened_at: string;
  closed_at: string | null;
}

/**
 * Version 2 keeps each label row's sources as `sources` rows (`cap_process_sources`); a version 1 part (before they
 * had a table) holds them as a JSON list in the label row.
 */
interface CapabilityPart {
  readonly version: 1 | 2;
  readonly grants: readonly GrantRow[];
  readonly accounts: readonly AccountRow[];
  readonly envelopes: readonly Record<string, unknown>[];
  readonly labels: readonly Record<string, unknown>[];
  readonly sources?: readonly { pid: string; oid: string }[];
  readonly manifests: readonly Record<string, unknown>[];
}

/** Resources whose grants a restore never revokes: checkpoint rights belong to the append-only checkpoint history. */
const KEPT_KINDS = new Set(['checkpoint']);

const ID_TOKEN = new RegExp(`\\b[a-z][a-z0-9]*_${ID_BODY_SOURCE}\\b`, 'g');

function partOf(part: StatePart): CapabilityPart {
  const d = part.data as CapabilityPart | undefined;
  if ((d?.version !== 1 && d?.version !== 2) || !Array.isArray(d.grants))
    throw new LibosError('internal_error', 'capabilities: the checkpoint part is not a version 1 or 2 capabilities part');
  return d;
}

/** The sources `pid` had observed at the capture of `data`. */
function capturedSources(data: CapabilityPart, pid: string): string[] {
  if (data.version === 2) return (data.sources ?? []).filter((r) => r.pid === pid).map((r) => r.oid);
  const row = data.labels.find((l) => l.pid === pid);
  return row?.sources === undefined ? [] : parseJsonColumn<string[]>(row.sources, 'checkpoint cap_process_labels.sources');
}

async function rowsIn<R>(db: Db, table: string, column: string, pids: readonly string[]): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < pids.length; i += 500) {
    out.push(
      ...((await db
        .selectFrom(table)
        .selectAll()
        .where(column, 'in', pids.slice(i, i + 500))
        .execute()) as R[]),
    );
  }
  return out;
}

export function capabilityState(env: EngineEnv): SubtreeStateContributor {
  return {
    key: 'capabilities',

    async capture(scope: ServiceScope, subtree: Subtree): Promise<StatePart> {
      const db = dbOf(scope);
      const grants = (await rowsIn<GrantRow>(db, T.grants, 'subject', subtree.pids)).sort((a, b) =>
        a.issued_at < b.issued_at ? -1 : a.issued_at > b.issued_at ? 1 : a.id < b.id ? -1 : 1,
      );
      const accounts = await rowsIn<AccountRow>(db, T.accounts, 'pid', subtree.pids);
      const envelopes = (await rowsIn<Record<string, unknown>>(db, T.usageReservations, 'pid', subtree.pids)).filter(
        (r) => r.status === 'active',
      );
      const labels = await rowsIn<Record<string, unknown>>(db, T.labels, 'pid', subtree.pids);
      const sources = await rowsIn<{ pid: string; oid: string }>(db, T.sources, 'pid', subtree.pids);
      const manifests = await rowsIn<Record<string, unknown>>(db, T.manifests, 'pid', subtree.pids);
      const data: CapabilityPart = { version: 2, grants, accounts, envelopes, labels, sources, manifests };
      return { data };
    },

    describe(part: StatePart): readonly StateItem[] {
      return partOf(part).grants.map((g) => ({
        kind: 'grant',
        id: g.id,
        state: {
          subject: g.subject,
          resource: g.resource,
          rights: JSON.parse(g.rights) as unknown,
          effect: g.effect,
          uses_remaining: g.uses_remaining,
          status: g.status,
        },
      }));
    },

    async restore(scope: ServiceScope, subtree: Subtree, part: StatePart, ctx: StateRestoreContext): Promise<void> {
      const db = dbOf(scope);
      const data = partOf(part);
      const now = env.clock.now().toISOString();
      const captured = new Set(data.grants.map((g) => g.id));
      const revoked: string[] = [];
      for (const row of await rowsIn<GrantRow>(db, T.grants, 'subject', subtree.pids)) {
        if (row.status !== 'active' || captured.has(row.id) || KEPT_KINDS.has(row.kind)) continue;
        const res = await db
          .updateTable(T.grants)
          .set({ status: 'revoked', revoke_cause: 'explicit', revoked_at: now })
          .where('id', '=', row.id)
          .where('status', '=', 'active')
          .executeTakeFirst();
        if (changed(res) !== 1) continue;
        await db
          .updateTable(T.reservations)
          .set({ status: 'invalidated', settled_at: now })
          .where('cap_id', '=', row.id)
          .where('status', '=', 'reserved')
          .execute();
        await scope.events.emit('capability.revoked', { capId: row.id, subject: row.subject, cause: 'explicit', actor: 'host' });
        await audit(scope, 'capability.revoke', row.resource, 'revoked', {
          capId: row.id,
          subject: row.subject,
          actor: 'host',
          reason: `checkpoint_restore ${ctx.checkpointId}`,
        });
        revoked.push(row.id);
      }
      const reopened: string[] = [];
      for (const a of data.accounts) {
        const cur = (await db.selectFrom(T.accounts).select(['status']).where('pid', '=', a.pid).executeTakeFirst()) as
          | { status: string }
          | undefined;
        if (!cur || cur.status === a.status) continue;
        await db.updateTable(T.accounts).set({ status: a.status, closed_at: a.closed_at }).where('pid', '=', a.pid).execute();
        reopened.push(a.pid);
      }
      if (revoked.length || reopened.length) {
        await audit(scope, 'capability.checkpoint_restore', subtree.rootPid, 'restored', {
          checkpoint_id: ctx.checkpointId,
          revoked,
          accounts_restored: reopened,
        });
      }
      ctx.report({ revoked_grants: revoked, accounts_restored: reopened });
    },

    async fork(scope: ServiceScope, subtree: Subtree, part: StatePart, ctx: StateForkContext): Promise<void> {
      const db = dbOf(scope);
      const data = partOf(part);
      const now = env.clock.now().toISOString();
      const budgets = budgetEngine(env, scope);
      const accounts = new Map(data.accounts.map((a) => [a.pid, a]));
      for (const pid of subtree.pids) {
        const to = ctx.renamed(pid);
        const a = accounts.get(pid);
        if (to === undefined || a === undefined) continue;
        const parent = to === ctx.rootPid ? null : ctx.renamed(a.parent_pid ?? '');
        if (to !== ctx.rootPid && parent === undefined) throw new LibosError('internal_error', `fork: the parent of ${pid} was not forked`);
        await budgets.openAccount(to, parent ?? null, parseJsonColumn<BudgetLimits>(a.limits, 'cap_budget_accounts.limits'));
      }
      const copied: string[] = [];
      const droppedFinite: string[] = [];
      const dropped: string[] = [];
      for (const g of data.grants) {
        const subject = ctx.renamed(g.subject);
        if (subject === undefined || g.status !== 'active' || g.id.startsWith(OWNER_CAP_PREFIX)) continue;
        if (g.uses_remaining !== null) {
          droppedFinite.push(g.id);
          continue;
        }
        const now_ = (await db.selectFrom(T.grants).selectAll().where('id', '=', g.id).executeTakeFirst()) as GrantRow | undefined;
        if (now_?.status !== 'active') {
          dropped.push(g.id);
          continue;
        }
        const resource = parseResource(g.resource.replace(ID_TOKEN, (id) => ctx.renamed(id) ?? id)).canonical;
        const derived = resource === g.resource;
        const row: GrantRow = {
          ...now_,
          id: env.ids.next('cap'),
          subject,
          resource,
          issuer: `fork:${g.subject}`,
          issuer_cap_id: derived ? g.id : null,
          parent_cap_id: derived ? g.id : null,
          issued_at: now,
          revoked_at: null,
          metadata: JSON.stringify({
            ...parseJsonColumn<Record<string, string>>(g.metadata, 'cap_grants.metadata'),
            forked_from: g.id,
            checkpoint_id: ctx.checkpointId,
          }),
        };
        await db.insertInto(T.grants).values(row).execute();
        await scope.events.emit('capability.granted', grantedEvent(recordFromRow(row)));
        copied.push(row.id);
      }
      for (const l of data.labels) {
        const from = String(l.pid);
        const to = ctx.renamed(from);
        if (to === undefined) continue;
        const cur = (await db.selectFrom(T.labels).select('labels').where('pid', '=', from).executeTakeFirst()) as
          | { labels: unknown }
          | undefined;
        await db
          .insertInto(T.labels)
          .values({ pid: to, labels: (cur ?? l).labels, updated_at: now })
          .execute();
        // The copy observed what the original observed, at the capture and since (sources never go down).
        const current = (await db.selectFrom(T.sources).select('oid').where('pid', '=', from).execute()) as { oid: string }[];
        const oids = new Set([...capturedSources(data, from), ...current.map((r) => r.oid)]);
        const rows = [...oids].sort().map((oid) => ({ pid: to, oid }));
        for (let i = 0; i < rows.length; i += 400)
          await db
            .insertInto(T.sources)
            .values(rows.slice(i, i + 400))
            .execute();
      }
      for (const m of data.manifests) {
        const to = ctx.renamed(String(m.pid));
        if (to !== undefined)
          await db
            .insertInto(T.manifests)
            .values({ ...m, pid: to })
            .execute();
      }
      await audit(scope, 'capability.transition_filter', ctx.rootPid, 'fork', {
        kind: 'fork',
        checkpoint_id: ctx.checkpointId,
        copied: copied.length,
        droppedFinite,
        droppedRevoked: dropped,
      });
      ctx.report({ copied_grants: copied.length, dropped_finite_grants: droppedFinite, dropped_revoked_grants: dropped });
    },
  };
}
