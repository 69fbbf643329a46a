import {
  DEFAULT_LABELS,
  joinLabels,
  LibosError,
  SERVICE_NAMES,
  type LlmContextService,
  type LlmContextWriteback,
  type ObjectsService,
  type ServiceScope,
} from '@libos/sdk';
import { asContextPayload, contextObjectName } from './context-payload.js';
import { findContextRow, newGeneration, updateContextRow } from './context-store.js';
import { estimateContextTokens, renderContext } from './render-context.js';
import { namespaces, resources } from '@libos/sdk';
import { flushAppends } from '../store/append-buffer.js';
import { kernelScope } from '../store/kernel-scope.js';

/** The payload with its captured events cursor moved to `seq` (never back). */
function withEventsCursor(payload: unknown, seq: number): unknown {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return payload;
  const p = payload as { captured?: Record<string, unknown> };
  const captured = { ...(p.captured ?? {}) };
  captured.events_seq = Math.max(Number(captured.events_seq ?? 0), seq);
  return { ...p, captured };
}

/** `version_conflict` of a compaction whose source moved: nothing of the context changes. */
const changed = (oid: string, expected: number, found: number | string) =>
  new LibosError('version_conflict', `LLM context changed during compaction: expected version ${expected}, found ${found}`, {
    details: { context_oid: oid, expected_version: expected, found_version: found },
  });

/**
 * The kernel's `llm_context` service (sdk `LlmContextService`), bound to one transaction.
 *
 * @example
 * const contexts = scope.service<LlmContextService>('llm_context');
 * const [contextOid, sourcePayload, compacted] = [oid, { entries: [] }, { entries: [], summary: 'so far' }];
 * await contexts.writeCompacted({ pid, contextOid, sourceVersion: 7, sourcePayload, payload: compacted });
 */
export function llmContextService(scope: ServiceScope): LlmContextService {
  const tx = kernelScope(scope);
  const objects = () => scope.service<ObjectsService>(SERVICE_NAMES.objects);
  return {
    objectName: contextObjectName,
    async state(pid) {
      const row = await findContextRow(tx.store, pid);
      return { pid, oid: row?.oid ?? null, generation: row?.generation ?? null, labels: row?.labels ?? DEFAULT_LABELS };
    },
    render: renderContext,
    estimateTokens: estimateContextTokens,
    async writeCompacted(w: LlmContextWriteback) {
      const at = scope.clock.now().toISOString();
      const row = await findContextRow(tx.store, w.pid);
      if (!row) throw new LibosError('object_not_found', `process ${w.pid} has no LLM context`, { details: { pid: w.pid } });
      const om = objects();
      let oid = w.contextOid;
      let current = await om.describe(oid);
      let recreated = false;
      if (!current?.payloadAvailable) {
        // The Object's payload did not survive a reopen: unless a new context took its name, re-create the source.
        const holder = await om.lookup(namespaces.process(w.pid), contextObjectName(w.pid));
        const live = holder && holder.oid !== oid ? await om.describe(holder.oid) : null;
        if (live?.payloadAvailable) throw changed(oid, w.sourceVersion, `a new context Object ${live.oid}`);
        const ref = await om.createForProcess(w.pid, {
          type: 'process_state',
          name: contextObjectName(w.pid),
          payload: w.sourcePayload,
          immutable: false,
          attachToView: false,
          labels: row.labels,
          metadata: { title: `LLM context of ${w.pid}`, tags: ['llm_context'] },
        });
        oid = ref.oid;
        current = await om.describe(oid);
        recreated = true;
        await updateContextRow(tx.store, w.pid, { oid }, at);
      } else {
        asContextPayload(await om.readPayload(oid), oid);
        if (current.version !== w.sourceVersion) throw changed(oid, w.sourceVersion, current.version);
      }
      const labels = joinLabels([row.labels, current!.labels, ...(w.labels ? [w.labels] : [])]);
      // The compaction's own events (its children, its job, its waits) are not replayed into the compacted context:
      // the next events delta starts after them.
      await flushAppends(tx.store);
      const last = await tx.store
        .selectFrom('events')
        .select((eb) => eb.fn.max('seq').as('seq'))
        .executeTakeFirst();
      const payload = withEventsCursor(w.payload, Number(last?.seq ?? 0));
      let ref: Awaited<ReturnType<ObjectsService['replacePayload']>>;
      try {
        ref = await om.replacePayload(oid, payload, {
          expectedVersion: current!.version,
          labels,
          tags: [...(w.tags ?? [])],
          action: 'llm.context_compacted',
        });
      } catch (err) {
        if (err instanceof LibosError && err.code === 'version_conflict')
          throw changed(oid, w.sourceVersion, String(err.details?.version ?? 'unknown'));
        throw err;
      }
      // The generation moves in the same transaction as the write: a conflict above left both as they were.
      const generation = newGeneration();
      await updateContextRow(tx.store, w.pid, { generation, labels, oid }, at);
      await scope.audit.record({
        action: 'llm.context_generation',
        target: resources.object(oid),
        decision: 'compacted',
        details: {
          pid: w.pid,
          oid,
          old_version: current!.version,
          version: ref.version,
          previous_generation: row.generation,
          generation,
          recreated,
          transform: 'compacted',
        },
      });
      return { oid, oldVersion: recreated ? w.sourceVersion : current!.version, version: ref.version, generation, recreated };
    },
  };
}
