import { canonicalJson, joinLabels, SERVICE_NAMES, type DataLabels, type ObjectsService } from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import type { Delivery, UnreadSummary } from '../mailbox/messages.js';
import type { ProcessInfo } from '../processes/process-record.js';
import { inTransaction } from '../store/transaction.js';
import { observe } from './context-observations.js';
import { asContextPayload, contextObjectName, LLM_CONTEXT_KIND, type ContextPayload } from './context-payload.js';
import { ensureContextRow, updateContextRow } from './context-store.js';
import { renderContext } from './render-context.js';
import { resources } from '@libos/sdk';
import type { KernelScope } from '../store/kernel-scope.js';

/** Why a process has a context Object: the host policy, a `context:enrichment` grant, or an `image_only` image. */
export type ContextSource = 'host_policy' | 'capability' | 'image_only';

/**
 * Whether `p` keeps an LLM context Object: the host config's `llm_context.policy` is `llm_context_object`, or it
 * holds `execute` on `context:enrichment`, or its image is `image_only` (whose prompt is that Object). Object Memory
 * must be loaded (the Object lives there). Null: source-only, no Object and no heading.
 */
export async function contextSource(deps: KernelDeps, scope: KernelScope, p: ProcessInfo): Promise<ContextSource | null> {
  if (!deps.registry.services.has(SERVICE_NAMES.objects)) return null;
  if (deps.registry.images.get(p.imageId)?.promptMode === 'image_only') return 'image_only';
  if (deps.hostConfig.llm_context.policy === 'llm_context_object') return 'host_policy';
  const d = await scope.authorityFor(p.pid).check('context:enrichment', 'execute');
  return d.allowed ? 'capability' : null;
}

/** A context as one quantum sees it, after this quantum's entries were appended. */
export interface ContextView {
  readonly oid: string;
  readonly version: number;
  readonly generation: string;
  /** The prompt text (starts with `LLM context object:`). */
  readonly text: string;
  /** The label high-water of the context. */
  readonly labels: DataLabels;
  /** UTF-8 bytes of the payload's canonical JSON (what the storage trigger measures). */
  readonly payloadBytes: number;
  /** Kinds of the entries this quantum appended (empty: nothing changed). */
  readonly appended: readonly string[];
}

/** The first payload of a context Object: the static prefix and one `process_started` entry. */
function freshPayload(deps: KernelDeps, p: ProcessInfo, source: ContextSource, at: string, labels: DataLabels): ContextPayload {
  const image = deps.registry.images.get(p.imageId);
  const [imageName, imageVersion] = p.imageId.split(':');
  return {
    kind: LLM_CONTEXT_KIND,
    schema_version: 1,
    cache_strategy: { mode: 'append_only_stable_prefix' },
    static_prefix: {
      pid: p.pid,
      image_id: p.imageId,
      image_name: imageName ?? p.imageId,
      image_version: imageVersion ?? null,
      safety_profile: image?.metadata?.safety_profile ?? 'default',
      context_policy: { policy: 'llm_context_object', source },
      parent_pid: p.parentPid,
      initial_working_directory: p.workingDirectory,
      goal_oid: p.goalOid,
      tool_names: [...p.visibleTools],
    },
    entries: [{ kind: 'process_started', at, pid: p.pid, image_id: p.imageId }],
    captured: {},
    label_history: [{ at, labels }],
  };
}

export interface RefreshOptions {
  readonly unread?: Readonly<Record<Delivery, UnreadSummary>> | null;
  /** The MemoryView token budget of the memory delta (default: the objects service's). */
  readonly viewTokenBudget?: number;
}

/**
 * Brings `p`'s context Object up to date for a quantum, in one transaction: creates it when the process has none
 * (or when a reopen lost its payload: a new Object with fresh entries, same generation, labels from the high-water),
 * appends one entry per observation that changed (one write, one version), and raises the label high-water. Null
 * when the process keeps no context Object.
 */
export async function refreshContext(deps: KernelDeps, p: ProcessInfo, opts: RefreshOptions = {}): Promise<ContextView | null> {
  return inTransaction(deps.db, deps.scopes, 'host', null, async (scope) => {
    const source = await contextSource(deps, scope, p);
    if (!source) return null;
    const at = scope.clock.now().toISOString();
    const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
    const flow = await deps.engine.flow(scope, p.pid).labels();
    const row = await ensureContextRow(scope.store, p.pid, flow, at);
    let labels = joinLabels([row.labels, flow]);
    const current = row.oid ? await objects.describe(row.oid) : null;
    let oid: string;
    let version: number;
    let payload: ContextPayload;
    if (current?.payloadAvailable) {
      oid = current.oid;
      version = current.version;
      payload = asContextPayload(await objects.readPayload(oid), oid);
    } else {
      payload = freshPayload(deps, p, source, at, labels);
      const ref = await objects.createForProcess(p.pid, {
        type: 'process_state',
        name: contextObjectName(p.pid),
        payload,
        immutable: false,
        attachToView: false,
        labels,
        metadata: { title: `LLM context of ${p.pid}`, tags: ['llm_context'] },
      });
      oid = ref.oid;
      version = ref.version;
      await updateContextRow(scope.store, p.pid, { oid }, at);
      await scope.audit.record({
        action: 'llm.context_created',
        target: resources.object(oid),
        decision: 'ok',
        details: { pid: p.pid, oid, generation: row.generation, source, replaces: row.oid },
      });
    }
    const seen = await observe(deps, scope, {
      process: p,
      unread: opts.unread ?? null,
      captured: payload.captured,
      contextOid: oid,
      ...(opts.viewTokenBudget !== undefined ? { viewTokenBudget: opts.viewTokenBudget } : {}),
    });
    const raised = joinLabels([labels, seen.labels]);
    const labelsRose = canonicalJson(raised) !== canonicalJson(labels);
    labels = raised;
    if (seen.entries.length > 0 || labelsRose) {
      payload = {
        ...payload,
        entries: [...payload.entries, ...seen.entries],
        captured: seen.captured,
        label_history: labelsRose ? [...payload.label_history, { at, labels }] : payload.label_history,
      };
      version = (await objects.replacePayload(oid, payload, { expectedVersion: version, labels, action: 'llm.context_append' })).version;
    }
    if (canonicalJson(labels) !== canonicalJson(row.labels)) await updateContextRow(scope.store, p.pid, { labels }, at);
    const text = renderContext(payload);
    return {
      oid,
      version,
      generation: row.generation,
      text,
      labels,
      payloadBytes: Buffer.byteLength(canonicalJson(payload), 'utf8'),
      appended: seen.entries.map((e) => e.kind),
    };
  });
}
