import { canonicalJson, LibosError, SERVICE_NAMES, type ErrorPayload, type ObjectsService, type ServiceScope } from '@libos/sdk';
import { namespaces, resources } from '@libos/sdk';

/** The job Object's name in the caller's namespace: `context_compaction_job:<pid>`. */
export const jobObjectName = (pid: string): string => `context_compaction_job:${pid}`;

export type JobStatus = 'active' | 'completed' | 'failed';

/** What `compact_process_context` keeps between its stages (and saves with its wait as `_resume_job`). */
export interface CompactionJob {
  readonly kind: 'context_compaction_job';
  readonly schema_version: 1;
  readonly status: JobStatus;
  readonly caller_pid: string;
  readonly context_oid: string;
  readonly source_version: number;
  /** A deep copy of the context payload at `source_version`. */
  readonly source_payload: { readonly entries: readonly unknown[]; readonly [key: string]: unknown };
  readonly source_tokens: number;
  readonly target_tokens: number;
  readonly preserve_recent_entries: number;
  readonly max_chunks: number;
  readonly force: boolean;
  /** 0-based index of the stage in progress (equal to `total_stages` once every stage is done). */
  readonly stage_index: number;
  readonly total_stages: number;
  readonly current_child_pid: string | null;
  /** Every compressor spawned, discarded ones included (so it can outnumber the stages). */
  readonly compressor_pids: readonly string[];
  /** Compressors whose result vanished (a reopen) and whose stage ran again. */
  readonly discarded_compressor_pids: readonly string[];
  /** The latest rolled-forward summary (one at most). */
  readonly summaries: readonly Record<string, unknown>[];
  readonly created_at: string;
  readonly updated_at: string;
  readonly result?: Readonly<Record<string, unknown>>;
  readonly error?: ErrorPayload;
}

const objects = (scope: ServiceScope) => scope.service<ObjectsService>(SERVICE_NAMES.objects);

/** Checks the shape of a job (a stored payload, or a resumed call's `_resume_job`). */
export function asJob(value: unknown, field: string): CompactionJob {
  const j = value as Partial<CompactionJob> | null;
  const ok =
    j !== null &&
    typeof j === 'object' &&
    j.kind === 'context_compaction_job' &&
    typeof j.caller_pid === 'string' &&
    typeof j.context_oid === 'string' &&
    Number.isInteger(j.source_version) &&
    typeof j.source_payload === 'object' &&
    j.source_payload !== null &&
    Array.isArray(j.source_payload.entries) &&
    Number.isInteger(j.stage_index) &&
    Number.isInteger(j.total_stages) &&
    Array.isArray(j.compressor_pids) &&
    Array.isArray(j.summaries);
  if (!ok) throw new LibosError('invalid_arguments', `${field}: not a context compaction job`, { details: { field } });
  return j as CompactionJob;
}

/** The caller's job, or null when it has none (or its payload did not survive a reopen). */
export async function loadJob(scope: ServiceScope, pid: string): Promise<{ job: CompactionJob; oid: string; version: number } | null> {
  const om = objects(scope);
  const ref = await om.lookup(namespaces.process(pid), jobObjectName(pid));
  if (!ref) return null;
  const d = await om.describe(ref.oid);
  if (!d?.payloadAvailable) return null;
  return { job: asJob(await om.readPayload(ref.oid), jobObjectName(pid)), oid: ref.oid, version: d.version };
}

/** Writes the job Object: a new one (or one superseding a payload lost on reopen), else a CAS over the current. */
export async function saveJob(scope: ServiceScope, job: CompactionJob): Promise<void> {
  const om = objects(scope);
  const pid = job.caller_pid;
  const stored = { ...job, updated_at: scope.clock.now().toISOString() };
  const ref = await om.lookup(namespaces.process(pid), jobObjectName(pid));
  const d = ref ? await om.describe(ref.oid) : null;
  if (ref && d?.payloadAvailable) {
    await om.replacePayload(ref.oid, stored, { expectedVersion: d.version, action: 'context.compaction_job' });
    return;
  }
  await om.createForProcess(pid, {
    type: 'process_state',
    name: jobObjectName(pid),
    payload: stored,
    immutable: false,
    attachToView: false,
    metadata: { title: `context compaction job of ${pid}`, tags: ['context_compaction_job'] },
  });
}

/** Marks a job failed with the error (in the failure's own transaction: the call's writes are gone by then). */
export async function failJob(scope: ServiceScope, job: CompactionJob, error: ErrorPayload): Promise<void> {
  await saveJob(scope, { ...job, status: 'failed', current_child_pid: null, error });
  await scope.audit.record({
    action: 'context.compaction_failed',
    target: resources.object(job.context_oid),
    decision: error.code,
    details: {
      pid: job.caller_pid,
      stage_index: job.stage_index,
      total_stages: job.total_stages,
      compressor_pids: job.compressor_pids,
      error,
    },
  });
}

/** Deep equality of two jobs, ignoring `updated_at` (the saved copy and the Object are written at the same moment). */
export const sameJob = (a: CompactionJob, b: CompactionJob): boolean =>
  canonicalJson({ ...a, updated_at: null }) === canonicalJson({ ...b, updated_at: null });
