import {
  canonicalJson,
  DEFAULT_LABELS,
  joinLabels,
  SERVICE_NAMES,
  sha256Hex,
  type DataLabels,
  type ObjectsService,
  type ViewManifestEntry,
} from '@libos/sdk';
import { sql, type ExpressionBuilder } from 'kysely';
import type { KernelDeps } from '../internal/kernel-deps.js';
import type { Delivery, UnreadSummary } from '../mailbox/messages.js';
import type { ProcessInfo } from '../processes/process-record.js';
import type { CapturedSignatures, ContextEntry } from './context-payload.js';
import { flushAppends } from '../store/append-buffer.js';
import type { KernelScope } from '../store/kernel-scope.js';
import type { KernelDatabase } from '../store/kernel-database.js';

/** The most events one `events_delta` carries (the newest; how many were left out is recorded). */
export const EVENTS_PER_DELTA = 20;

/**
 * Bookkeeping events a context leaves out: each budget charge, and each model call (the model knows it was asked).
 * They come every quantum and tell the model nothing it can act on. So is an owner's implicit grant on an Object it
 * just created (`capability.granted` of a `cap_own:` record): the Object itself is in the memory delta.
 */
export const CONTEXT_SILENT_EVENTS: readonly string[] = ['resource.charged', 'llm_call'];

/** An event's data as a context shows it: without the process's own pid and without digests (ids stay). */
function slimEventData(pid: string, data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    if ((k === 'pid' && v === pid) || /(_sha256|Sha256)$/.test(k)) continue;
    out[k] = v;
  }
  return out;
}

/** A MemoryView root as a memory delta shows it: the untrusted-data framing is said once per entry, not per Object. */
function slimRoot(rendered: Record<string, unknown>): Record<string, unknown> {
  const { kind: _kind, content_trust: _trust, note: _note, ...rest } = rendered;
  for (const k of ['title', 'summary'] as const) if (rest[k] === null) delete rest[k];
  return rest;
}

/** What one quantum adds to a context: the entries that changed, and the signatures to remember. */
export interface Observation {
  readonly entries: readonly ContextEntry[];
  readonly captured: CapturedSignatures;
  /** Labels of the materialized MemoryView roots (the context takes them on). */
  readonly labels: DataLabels;
}

export interface ObserveInput {
  readonly process: ProcessInfo;
  readonly unread: Readonly<Record<Delivery, UnreadSummary>> | null;
  readonly captured: CapturedSignatures;
  /** The context Object itself: never rendered into its own memory delta. */
  readonly contextOid: string;
  readonly viewTokenBudget?: number;
}

const signature = (v: unknown): string => sha256Hex(canonicalJson(v));

/**
 * Looks at the process as a quantum is about to prompt it and returns one entry per thing that changed since the
 * signatures in `captured`: `process_snapshot`, `capabilities_snapshot`, `tool_table_snapshot`, `events_delta` (the
 * pid's events after the last one covered, at most EVENTS_PER_DELTA), `memory_delta` (MemoryView roots whose
 * rendered line is new or changed) and `context_omissions` (roots newly left out of the view, with the reason).
 */
export async function observe(deps: KernelDeps, scope: KernelScope, input: ObserveInput): Promise<Observation> {
  const { process: p, captured } = input;
  const at = scope.clock.now().toISOString();
  const entries: ContextEntry[] = [];
  const next: { -readonly [K in keyof CapturedSignatures]: CapturedSignatures[K] } = { ...captured };

  const snapshot = {
    image_id: p.imageId,
    parent_pid: p.parentPid,
    working_directory: p.workingDirectory,
    loaded_skills: Object.keys(p.loadedSkills).sort(),
    llm_profile_id: p.llmProfileId,
    unread_messages: input.unread ? { interrupt: input.unread.interrupt.count, normal: input.unread.normal.count } : null,
  };
  const processSig = signature(snapshot);
  if (processSig !== captured.process) {
    entries.push({ kind: 'process_snapshot', at, ...snapshot });
    next.process = processSig;
  }

  // Owners' implicit records (one per owned Object) are left out: they are the Objects, not authority to report.
  const grants = (await deps.engine.list(scope, p.pid))
    .filter((g) => !g.id.startsWith('cap_own:'))
    // Defaults are left out (an unlimited, unexpiring allow is just its resource and rights).
    .map((g) => ({
      resource: g.resource,
      rights: [...g.rights].sort(),
      ...(g.effect !== 'allow' ? { effect: g.effect } : {}),
      ...(g.usesRemaining !== null ? { uses_remaining: g.usesRemaining } : {}),
      ...(g.expiresAt !== null ? { expires_at: g.expiresAt } : {}),
    }))
    .sort((a, b) => a.resource.localeCompare(b.resource) || canonicalJson(a).localeCompare(canonicalJson(b)));
  const capsSig = signature(grants);
  if (capsSig !== captured.capabilities) {
    entries.push({ kind: 'capabilities_snapshot', at, grants });
    next.capabilities = capsSig;
  }

  const tools = [...p.visibleTools];
  const toolsSig = signature(tools);
  if (toolsSig !== captured.tools) {
    entries.push({ kind: 'tool_table_snapshot', at, tools });
    next.tools = toolsSig;
  }

  const after = captured.events_seq ?? 0;
  await flushAppends(scope.store);
  const rows = await scope.store
    .selectFrom('events')
    .select(['seq', 'type', 'data'])
    .where('pid', '=', p.pid)
    .where('seq', '>', after)
    .where('type', 'not in', CONTEXT_SILENT_EVENTS)
    .where(notOwnCapabilityGrant)
    .orderBy('seq', 'desc')
    .limit(EVENTS_PER_DELTA + 1)
    .execute();
  if (rows.length > 0) {
    const newest = rows.slice(0, EVENTS_PER_DELTA).reverse();
    const last = Number(newest[newest.length - 1]!.seq);
    const total = rows.length > EVENTS_PER_DELTA ? await countEvents(scope, p.pid, after, last) : newest.length;
    entries.push({
      kind: 'events_delta',
      at,
      events: newest.map((e) => ({
        seq: Number(e.seq),
        type: e.type,
        data: slimEventData(p.pid, JSON.parse(e.data) as Record<string, unknown>),
      })),
      omitted_events: total - newest.length,
    });
    next.events_seq = last;
  }

  let labels: DataLabels = DEFAULT_LABELS;
  if (deps.registry.services.has(SERVICE_NAMES.objects)) {
    const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
    const view = await objects.renderView(p.pid, input.viewTokenBudget !== undefined ? { tokenBudget: input.viewTokenBudget } : {});
    labels = joinLabels([view.labels]);
    const lines = view.text === '' ? [] : view.text.split('\n');
    const included = view.manifest.filter((m) => m.disposition === 'included');
    const memory: Record<string, string> = { ...(captured.memory ?? {}) };
    const omitted: Record<string, string> = { ...(captured.omitted ?? {}) };
    const changed: unknown[] = [];
    included.forEach((m, i) => {
      const line = lines[i];
      if (line === undefined || m.oid === input.contextOid) return;
      delete omitted[m.oid];
      const sha = sha256Hex(line);
      if (memory[m.oid] === sha) return;
      memory[m.oid] = sha;
      changed.push(slimRoot(JSON.parse(line) as Record<string, unknown>));
    });
    if (changed.length > 0) {
      entries.push({ kind: 'memory_delta', at, content_trust: 'untrusted_data', objects: changed });
      next.memory = memory;
    }
    const fresh: Pick<ViewManifestEntry, 'oid' | 'version' | 'reason' | 'tokens'>[] = [];
    for (const m of view.manifest) {
      if (m.disposition !== 'omitted' || m.oid === input.contextOid || omitted[m.oid] === m.reason) continue;
      omitted[m.oid] = m.reason;
      fresh.push({ oid: m.oid, version: m.version, reason: m.reason, tokens: m.tokens });
    }
    if (fresh.length > 0) entries.push({ kind: 'context_omissions', at, omitted: fresh });
    next.omitted = omitted;
  }
  return { entries, captured: next, labels };
}

/**
 * Events other than a grant of an own capability (`capId` `cap_own:…`), matched on the JSON text of `data`: compact
 * on SQLite (`"capId":"cap_own:`), jsonb's text on PostgreSQL (`"capId": "cap_own:`). Neither pattern can match the
 * other dialect's text, nor an escaped quote inside a string value.
 */
const notOwnCapabilityGrant = (eb: ExpressionBuilder<KernelDatabase, 'events'>) => {
  const text = sql<string>`cast(${sql.ref('data')} as text)`;
  return eb.or([
    eb('type', '!=', 'capability.granted'),
    eb.not(eb.or([eb(text, 'like', '%"capId":"cap_own:%'), eb(text, 'like', '%"capId": "cap_own:%')])),
  ]);
};

async function countEvents(scope: KernelScope, pid: string, after: number, last: number): Promise<number> {
  await flushAppends(scope.store);
  const r = await scope.store
    .selectFrom('events')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('pid', '=', pid)
    .where('seq', '>', after)
    .where('seq', '<=', last)
    .where('type', 'not in', CONTEXT_SILENT_EVENTS)
    .where(notOwnCapabilityGrant)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
