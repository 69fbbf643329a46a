import { canonicalJson, DEFAULT_LABELS, joinLabels, LibosError, SERVICE_NAMES, type DataLabels, type ObjectsService } from '@libos/sdk';
import type { BudgetLimits } from '@libos/capabilities';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { loadSkillOnProcess } from '../skills/skill-navigation.js';
import { inTransaction } from '../store/transaction.js';
import { newProcessHistories } from '../store/recent-history.js';
import { TERMINAL_PROCESS_STATUSES, type ProcessInfo } from './process-record.js';
import { getProcess } from './process-store.js';
import { resources } from '@libos/sdk';
import type { KernelScope } from '../store/kernel-scope.js';

export interface SpawnOptions {
  /** Registered image id (default `base-agent:v0`). */
  readonly image?: string;
  readonly goal: string;
  readonly budget?: BudgetLimits;
  readonly llmProfileId?: string;
  readonly workingDirectory?: string;
  /**
   * Host-side child spawn: the new process's parent. Its budget is carved from the parent's remaining (default half),
   * and it starts with no grants. (The model's path is `spawn_child_process`.)
   */
  readonly parentPid?: string;
  /**
   * Labels of what the parent hands the child (its goal text, a runner's arguments, shared roots): the goal Object
   * carries them and the child's flow starts at them. Omitted for host text (nothing to inherit).
   */
  readonly labels?: DataLabels;
}

/** Upper bound on a goal's text. */
export const MAX_GOAL_CHARS = 32_000;

/**
 * Spawns a process (a root, or a host-side child) from a registered image, in one transaction: the row, its budget account, its process
 * scope and goal Object (when Object Memory is loaded), its default Skills, the `process_created` event and the
 * `process.spawn` audit. Any failure leaves no row.
 */
export async function spawnProcess(deps: KernelDeps, opts: SpawnOptions): Promise<ProcessInfo> {
  return inTransaction(deps.db, deps.scopes, 'host', null, (scope) => spawnInScope(deps, scope, opts));
}

/** The spawn transaction body, for callers that already hold a transaction (e.g. `spawn_child_process`). */
export async function spawnInScope(
  deps: KernelDeps,
  scope: KernelScope,
  opts: SpawnOptions & { readonly beforeRunnable?: (pid: string) => Promise<void> },
): Promise<ProcessInfo> {
  const imageId = opts.image ?? 'base-agent:v0';
  const image = deps.registry.images.get(imageId);
  if (!image)
    throw new LibosError(
      'image_not_found',
      `image: ${JSON.stringify(imageId)} is not registered (registered: ${[...deps.registry.images.keys()].join(', ')})`,
      { details: { image: imageId } },
    );
  if (typeof opts.goal !== 'string' || opts.goal.trim() === '')
    throw new LibosError('invalid_arguments', 'goal: must be a non-empty string');
  if (opts.goal.length > MAX_GOAL_CHARS)
    throw new LibosError('invalid_arguments', `goal: must be at most ${MAX_GOAL_CHARS} characters (got ${opts.goal.length})`);
  const pid = deps.ids.next('pid');
  const parentPid = opts.parentPid ?? null;
  let cwd = opts.workingDirectory ?? '.';
  if (parentPid) {
    const parent = await getProcess(scope.store, parentPid);
    if (TERMINAL_PROCESS_STATUSES.has(parent.status))
      throw new LibosError(
        'invalid_state',
        `parentPid: process ${parentPid} is ${parent.status}; a terminal process cannot have new children`,
      );
    cwd = opts.workingDirectory ?? parent.workingDirectory;
  }
  // A child joins its parent's tree (the unit a host leases when many share the store).
  const rootPid = parentPid
    ? ((await scope.store.selectFrom('processes').select('root_pid').where('pid', '=', parentPid).executeTakeFirst())?.root_pid ??
      parentPid)
    : pid;
  const now = deps.clock.now().toISOString();
  await scope.store
    .insertInto('processes')
    .values({
      pid,
      parent_pid: parentPid,
      image_id: imageId,
      status: 'created',
      wait_state: null,
      outcome: null,
      state_generation: 0,
      revision: 0,
      goal: opts.goal,
      goal_oid: null,
      tool_table: JSON.stringify([...image.defaultTools]),
      loaded_skills: '{}',
      working_directory: cwd,
      llm_profile_id: opts.llmProfileId ?? null,
      created_at: now,
      updated_at: now,
      root_pid: rootPid,
    })
    .execute();
  // A new pid: no event or audit row names it yet, so its turn histories are known empty (K-9.31).
  if (scope.memo) newProcessHistories(scope.memo, pid);
  await deps.engine.budgets(scope).openAccount(pid, parentPid, opts.budget);
  let goalOid: string | null = null;
  if (deps.registry.services.has(SERVICE_NAMES.objects)) {
    const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
    await objects.initProcess(pid);
    const labels = opts.labels ? { labels: opts.labels } : {};
    goalOid = (await objects.createForProcess(pid, { type: 'goal', name: 'goal', payload: opts.goal, immutable: true, ...labels })).oid;
  }
  // The child observes what it was handed: its high-water starts at the parent's (a default flow adds nothing).
  if (opts.labels && canonicalJson(joinLabels([DEFAULT_LABELS, opts.labels])) !== canonicalJson(DEFAULT_LABELS)) {
    await deps.engine.flow(scope, pid).taint(opts.labels);
  }
  for (const skill of image.defaultSkills) await loadSkillOnProcess(scope.store, deps.registry, pid, skill, now);
  if (opts.beforeRunnable) await opts.beforeRunnable(pid);
  const r = await scope.store
    .updateTable('processes')
    .set({ status: 'runnable', goal_oid: goalOid, state_generation: 1, updated_at: now })
    .where('pid', '=', pid)
    .where('status', '=', 'created')
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) throw new LibosError('internal_error', `spawn of ${pid} lost its created row`);
  await scope.events.emit('process_created', { pid, image: imageId, parent_pid: parentPid, goal_oid: goalOid });
  await scope.audit.record({
    action: 'process.spawn',
    target: resources.process(pid),
    decision: 'ok',
    details: { pid, image: imageId, parent_pid: parentPid, goal_oid: goalOid, goal_chars: opts.goal.length },
  });
  return getProcess(scope.store, pid);
}
