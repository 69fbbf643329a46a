import type { CheckpointsService, RestoreResult } from '@libos/checkpoints';
import type { Runtime, ToolCallResult } from '@libos/kernel';

type StepFn = (text: string, details?: readonly string[]) => number;
type ExpectFn = (cond: boolean, n: number, what: string) => void;

/** The scene's fixed inputs. */
export const SCENE = {
  goal: 'Keep the survey ledger',
  entries: [{ site: 'north cove' }, { site: 'lighthouse' }],
  risky: { site: 'DROP ALL SITES' },
} as const;

const payloadOf = (r: ToolCallResult) => (r.ok ? (r.payload as Record<string, unknown>) : null);

/**
 * The checkpoint scene: a keeper process fills a ledger and checkpoints its subtree; a risky change follows (a bad
 * entry and a stray Object); the host restores the checkpoint; the change is gone (the ledger reads back with its
 * captured version and sha256), and the audit trail is intact: every earlier record is still there, the restore added
 * its own. Each step checks its outcome.
 */
export async function checkpointScene(rt: Runtime, step: StepFn, expect: ExpectFn) {
  const keeper = await rt.spawn({ goal: SCENE.goal });
  await rt.grant(keeper.pid, 'skill:agent-libos-object-memory', ['execute']);
  await rt.grant(keeper.pid, 'skill:agent-libos-checkpoints', ['execute']);
  await rt.grant(keeper.pid, `checkpoint:process:${keeper.pid}`, ['write']);
  for (const skill_id of ['agent-libos-object-memory', 'agent-libos-checkpoints'])
    await rt.call(keeper.pid, 'activate_skill', { skill_id });
  await rt.call(keeper.pid, 'create_memory_object', { type: 'plan', name: 'ledger', payload: { entries: [] }, immutable: false });
  for (const entry of SCENE.entries) await rt.call(keeper.pid, 'append_memory_object', { name: 'ledger', entry });
  const before = payloadOf(await rt.call(keeper.pid, 'read_memory_object', { name: 'ledger' }));
  let n = step(
    `host spawns the keeper ${keeper.pid}; it writes a ledger of ${SCENE.entries.length} sites (version ${String(before?.version)})`,
    [`granted: write on checkpoint:process:${keeper.pid} (create a checkpoint of its own subtree), nothing more`],
  );
  expect(before !== null && before.version === 1 + SCENE.entries.length, n, 'the keeper should have its ledger at version 3');

  const created = await rt.call(keeper.pid, 'create_checkpoint', { label: 'before the risky change' });
  const cp = payloadOf(created);
  n = step(`the keeper checkpoints its subtree → ${String(cp?.checkpoint_id)}`, [
    cp
      ? `captured ${String((cp.pids as string[]).length)} process(es), ${String((cp.counts as Record<string, number>).objects)} Objects, ` +
        `${String(cp.payload_bytes)} payload bytes (stored by sha256)`
      : `refused: ${created.ok ? '' : created.error.message}`,
    'the keeper now reads its checkpoint; restoring it needs admin, which only the host holds here',
  ]);
  expect(cp !== null, n, `create_checkpoint should succeed (${created.ok ? '' : created.error.code})`);
  const checkpointId = String(cp!.checkpoint_id);

  await rt.call(keeper.pid, 'append_memory_object', { name: 'ledger', entry: SCENE.risky });
  await rt.call(keeper.pid, 'create_memory_object', { type: 'observation', name: 'stray', payload: 'written by the risky change' });
  const changed = payloadOf(await rt.call(keeper.pid, 'read_memory_object', { name: 'ledger' }));
  const diff = payloadOf(await rt.call(keeper.pid, 'diff_checkpoint', { checkpoint_id: checkpointId }));
  const objects = (diff?.changes as Record<string, { counts: Record<string, number> }> | undefined)?.objects?.counts;
  n = step(
    `a risky change: the ledger gets ${JSON.stringify(SCENE.risky)} (version ${String(changed?.version)}) and a stray Object appears`,
    [`diff_checkpoint: objects +${String(objects?.added)} ~${String(objects?.changed)} since the capture`],
  );
  expect(
    changed?.version === Number(before!.version) + 1 && objects?.added === 1 && objects.changed === 1,
    n,
    'the change should show as one changed and one added Object',
  );

  const auditBefore = await rt.audit({ limit: 100_000 });
  const restored: RestoreResult = await rt.transaction((scope) =>
    scope.service<CheckpointsService>('checkpoints').restore('host', checkpointId),
  );
  const auditAfter = await rt.audit({ limit: 100_000 });
  const objectsReport = restored.report.objects ?? {};
  n = step(`host restores ${checkpointId} (the admin actor) → ${restored.restore_id}`, [
    `${String(objectsReport.restored_objects)} Objects restored, ${(objectsReport.released_objects as string[]).length} released ` +
      `(the stray one), ${(objectsReport.rehydrated_payloads as string[]).length} payloads put back, each checked against its sha256`,
  ]);
  const after = payloadOf(await rt.call(keeper.pid, 'read_memory_object', { name: 'ledger' }));
  const stray = await rt.call(keeper.pid, 'read_memory_object', { name: 'stray' });
  n = step(
    `the change is gone: the ledger is at version ${String(after?.version)} again with its ${SCENE.entries.length} sites; ` +
      `the stray Object reads ${stray.ok ? 'back' : stray.error.code}`,
  );
  expect(
    after !== null &&
      after.version === before!.version &&
      after.sha256 === before!.sha256 &&
      !stray.ok &&
      stray.error.code === 'object_not_found',
    n,
    'the ledger should read back as captured and the stray Object be gone',
  );

  const kept = auditBefore.every((a, i) => auditAfter[i]?.id === a.id);
  const added = auditAfter.slice(auditBefore.length).map((a) => a.action);
  n = step(`the audit trail is intact: all ${auditBefore.length} earlier records kept, ${added.length} added by the restore`, [
    `added: ${[...new Set(added)].join(', ')}`,
  ]);
  expect(kept && added.includes('checkpoint.restore'), n, 'a restore must keep every audit record and add its own');

  const exit = await rt.call(keeper.pid, 'process_exit', { payload: { sites: SCENE.entries.length } });
  const ended = await rt.process(keeper.pid);
  n = step(`the keeper exits → ${ended.status}; the checkpoint stays in the store (libos checkpoint list)`);
  expect(exit.ok && ended.status === 'exited', n, `the keeper should exit (${exit.ok ? ended.status : exit.error.code})`);
  return { keeper: keeper.pid, checkpoint: checkpointId, restore: restored.restore_id };
}
