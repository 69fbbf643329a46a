import { SERVICE_NAMES, type ObjectsService, type ProcessService, type ServiceScope } from '@libos/sdk';
import { isTerminalProcessStatus, namespaces, resources } from '@libos/sdk';
import { chunkEntries } from './chunks.js';
import { asJob } from './compaction-job.js';
import { stageObjectName } from './compressor-image.js';
import { buildStageGoal } from './stage-goal.js';

/**
 * The session plugin's open hook: a compaction stage whose compressor is still live after a reopen lost its stage
 * Object's payload (payloads are runtime-local). Its goal is rebuilt from the job saved durably with the caller's
 * wait (`_resume_job`), as a new `context_compaction_stage:<child>` Object in the child's view, so the compressor can
 * still do its stage. A wait already being resumed (`resuming`) is left to the kernel, which fails it closed.
 */
export async function rebuildStageGoals(scope: ServiceScope): Promise<string[]> {
  const processes = scope.service<ProcessService>(SERVICE_NAMES.processes);
  const rebuilt: string[] = [];
  const waits = await processes.savedCalls('compact_process_context');
  // Only a runtime with Object Memory can have compacted (the context is an Object): none saved, nothing to look up.
  if (waits.length === 0) return rebuilt;
  const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
  for (const saved of waits) {
    if (saved.status !== 'pending' || saved.wait.kind !== 'child' || saved.args._resume_job === undefined) continue;
    const job = asJob(saved.args._resume_job, '_resume_job');
    const childPid = saved.wait.child_pid;
    const child = await processes.get(childPid);
    if (isTerminalProcessStatus(child.status) || job.current_child_pid !== childPid) continue;
    const ref = await objects.lookup(namespaces.process(childPid), stageObjectName(childPid));
    const d = ref ? await objects.describe(ref.oid) : null;
    if (d?.payloadAvailable) continue;
    const chunks = chunkEntries(job.source_payload.entries, job.max_chunks);
    const state = await objects.describe(job.context_oid);
    await objects.createForProcess(childPid, {
      type: 'goal',
      name: stageObjectName(childPid),
      payload: buildStageGoal(job, chunks),
      immutable: true,
      ...(state ? { labels: state.labels } : {}),
      metadata: { title: `context compaction stage ${job.stage_index + 1} of ${job.total_stages} (rebuilt after a reopen)` },
    });
    await scope.audit.record({
      action: 'context.compaction_stage_rebuilt',
      target: resources.process(childPid),
      decision: 'rebuilt',
      details: { pid: saved.pid, child_pid: childPid, stage_index: job.stage_index + 1, total_stages: job.total_stages },
    });
    rebuilt.push(childPid);
  }
  return rebuilt;
}
