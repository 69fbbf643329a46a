// The crash suite's checks can fail: each invariant of crash-invariants.ts, on a small healthy store built here
// (no child, no kill), holds; then the state a bug would leave is written in by hand and the check names it.
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime, type ToolCallResult } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import { afterEach, describe, expect, it } from 'vitest';
import { rawSql } from '../support/kernel-harness.js';
import { CRASH_AGENT_IMAGE, crashEffects } from './crash-effects.mjs';
import { checkReopened, checkSettled, rawRows, readJsonLines, settle, type EffectLine, type JournalLine } from './crash-invariants.js';

const open: Runtime[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const rt of open.splice(0)) await rt.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Healthy {
  readonly rt: Runtime;
  readonly path: string;
  readonly reopen: () => Promise<Runtime>;
  readonly journal: JournalLine[];
  readonly effects: () => EffectLine[];
  /** worker: a ledger at version 2, one effect (key k1), one live child; asker: its question answered, not yet resumed. */
  readonly worker: string;
  readonly child: string;
  readonly asker: string;
  readonly question: string;
}

/** What the workload does, by hand and journaled the same way: every call's intent and result, and the answer. */
async function healthy(): Promise<Healthy> {
  const dir = mkdtempSync(join(tmpdir(), 'libos-crash-inv-'));
  dirs.push(dir);
  const effectsLog = join(dir, 'effects.jsonl');
  const path = join(dir, 'libos.db');
  const reopen = async () => {
    const rt = await openRuntime({
      path,
      plugins: [capabilities(), objectMemory(), tasks(), session(), crashEffects({ log: effectsLog })],
    });
    open.push(rt);
    return rt;
  };
  const rt = await reopen();
  const journal: JournalLine[] = [];
  const call = async (pid: string, tool: string, args: Record<string, unknown>): Promise<Extract<ToolCallResult, { ok: true }>> => {
    journal.push({ epoch: 0, k: 'intent', pid, tool, args });
    const r = await rt.call(pid, tool, args);
    const payload = r.ok && r.payload && typeof r.payload === 'object' ? (r.payload as Record<string, unknown>) : null;
    journal.push({
      epoch: 0,
      k: 'result',
      pid,
      tool,
      call_id: r.call_id,
      ok: r.ok,
      wait: r.ok ? (r.wait ?? null) : null,
      code: r.ok ? null : r.error.code,
      payload,
    });
    if (!r.ok) throw new Error(`${tool}: ${JSON.stringify(r.error)}`);
    return r;
  };
  const worker = (await rt.spawn({ image: CRASH_AGENT_IMAGE, goal: 'crash:worker:e0:0' })).pid;
  await rt.grant(worker, 'crash_effect:*', ['write']);
  await rt.grant(worker, 'process:spawn', ['write']);
  await call(worker, 'create_memory_object', { type: 'plan', name: 'ledger-0', payload: { entries: [] }, immutable: false });
  await call(worker, 'append_memory_object', { name: 'ledger-0', entry: { seq: 1 } });
  await call(worker, 'crash_effect', { key: 'k1' });
  const child = ((await call(worker, 'spawn_child_process', { goal: 'crash:child:w:0' })).payload as { pid: string }).pid;
  const asker = (await rt.spawn({ image: CRASH_AGENT_IMAGE, goal: 'crash:asker:e0:1' })).pid;
  await rt.grant(asker, 'human:owner', ['write']);
  const wait = (await call(asker, 'ask_human', { question: 'q0' })) as { wait?: { request_ids: string[] } };
  const question = wait.wait!.request_ids[0]!;
  const answered = await rt.answerHuman(question, { approved: true, answer: 'yes' });
  journal.push({ epoch: 0, k: 'answer', id: question, pid: asker, status: answered.status });
  return { rt, path, reopen, journal, effects: () => readJsonLines<EffectLine>(effectsLog), worker, child, asker, question };
}

const sql = (rt: Runtime, text: string) => rawSql(rt, text);

describe('crash invariants', () => {
  it('hold on a healthy store, before and after it settles (the answered question resumes, everything exits)', async () => {
    const h = await healthy();
    expect(await checkReopened(h.rt, h.journal, h.effects())).toEqual([]);
    expect(await settle(h.rt)).toEqual([]);
    expect(await checkSettled(h.rt, h.journal, h.effects())).toEqual([]);
    expect((await h.rt.processes()).map((p) => p.status)).toEqual(['exited', 'exited', 'exited']);
  });

  it('nothing running: a process left `running` or a saved call left `resuming` is named', async () => {
    const h = await healthy();
    await sql(h.rt, `UPDATE processes SET status = 'running' WHERE pid = '${h.worker}'`);
    await sql(h.rt, `UPDATE pending_actions SET status = 'resuming' WHERE pid = '${h.asker}'`);
    const v = await checkReopened(h.rt, h.journal, h.effects());
    expect(v).toContain(`process ${h.worker} is running`);
    expect(v.some((x) => x.startsWith('saved call ') && x.endsWith(` of ${h.asker} is resuming`))).toBe(true);
  });

  it('no orphan: a live child of a terminal parent is named', async () => {
    const h = await healthy();
    await sql(h.rt, `UPDATE processes SET status = 'exited' WHERE pid = '${h.worker}'`);
    expect(await checkReopened(h.rt, h.journal, h.effects())).toContain(
      `orphan: ${h.child} is runnable but its parent ${h.worker} is exited`,
    );
  });

  it('no effect twice: a second outside-world action on a key, or a committed effect that never acted, is named', async () => {
    const h = await healthy();
    const [line] = h.effects();
    expect(
      (await checkReopened(h.rt, h.journal, [line!, { ...line!, call_id: 'call_replayed' }])).some((x) =>
        x.startsWith('effect k1 happened 2 times'),
      ),
    ).toBe(true);
    expect(await checkReopened(h.rt, h.journal, [])).toContain('effect k1 is committed but never happened');
  });

  it('audit matches state: an audited effect without its row, and a row without its audit, are named', async () => {
    const h = await healthy();
    const effectCall = h.journal.find((l) => l.k === 'result' && l.tool === 'crash_effect')!.call_id!;
    await sql(h.rt, 'DELETE FROM crash_effects');
    const v = await checkReopened(h.rt, h.journal, h.effects());
    expect(v).toContain(`crash_effect call ${effectCall} is audited ok but has no row`);
    expect(v).toContain(
      `crash_effect call ${effectCall} of ${h.worker} succeeded and is audited, but no crash_effects row for ${effectCall}`,
    );
    await sql(h.rt, `INSERT INTO crash_effects (key, pid, call_id) VALUES ('k2', '${h.worker}', 'call_unaudited')`);
    expect(await checkReopened(h.rt, h.journal, h.effects())).toContain(
      'crash_effects row k2 (call call_unaudited) has no successful audit',
    );
  });

  it('audit matches state: a ledger version no audited append explains, and a reported call with no audit, are named', async () => {
    const h = await healthy();
    await sql(h.rt, `UPDATE om_objects SET version = version + 1 WHERE name = 'ledger-0'`);
    expect(await checkReopened(h.rt, h.journal, h.effects())).toContain(
      `the ledgers of ${h.worker} gained 2 versions but 1 appends of ${h.worker} are audited ok`,
    );
    const ghost: JournalLine = {
      epoch: 0,
      k: 'result',
      pid: h.worker,
      tool: 'create_memory_object',
      call_id: 'call_ghost',
      ok: true,
      wait: null,
      code: null,
      payload: { oid: 'obj_0000000000000000' },
    };
    expect(await checkReopened(h.rt, [...h.journal, ghost], h.effects())).toContain(
      `create_memory_object call call_ghost of ${h.worker} returned ok but its audit has nothing`,
    );
  });

  it('audit matches state: a human request no audited call waits on, and an answer the queue lost, are named', async () => {
    const h = await healthy();
    await sql(
      h.rt,
      `INSERT INTO human_requests (id, pid, kind, prompt, details, status, created_at)
       VALUES ('hreq_forged', '${h.asker}', 'question', 'q?', '{}', 'pending', '2026-01-01T00:00:00.000Z')`,
    );
    await sql(h.rt, `UPDATE human_requests SET status = 'rejected' WHERE id = '${h.question}'`);
    const v = await checkReopened(h.rt, h.journal, h.effects());
    expect(v).toContain(`human request hreq_forged of ${h.asker} has no audited call waiting on it`);
    expect(v).toContain(`human request ${h.question} was answered approved but is rejected`);
  });

  it('no answered request lost: an answered call whose saved action is gone (overwritten) never resumes; the check names it', async () => {
    const h = await healthy();
    // What a second waiting call did before it was refused: it replaced the answered call's saved action.
    await sql(h.rt, `DELETE FROM pending_actions WHERE pid = '${h.asker}'`);
    expect(await checkReopened(h.rt, h.journal, h.effects())).toEqual([]);
    expect(await settle(h.rt)).toEqual([]);
    const v = await checkSettled(h.rt, h.journal, h.effects());
    expect(v.filter((x) => x.startsWith('answered request lost'))).toEqual([
      expect.stringContaining(`${h.question} (approved) of ${h.asker}; its call call_`),
    ]);
  });

  it('no effect twice: a call that succeeds twice with the same arguments is named', async () => {
    const h = await healthy();
    await sql(
      h.rt,
      `INSERT INTO audit_records (id, ts, actor, action, target, decision, call_id, details)
       SELECT 'aud_replayed', ts, actor, action, target, decision, 'call_replayed', details FROM audit_records
       WHERE action = 'tool.call' AND target = 'tool:crash_effect' AND decision = 'ok'`,
    );
    const v = await checkReopened(h.rt, h.journal, h.effects());
    expect(v.some((x) => x.startsWith('the same call succeeded 2 times') && x.includes('tool:crash_effect'))).toBe(true);
  });

  it('integrity: a store whose index page was overwritten fails PRAGMA integrity_check, and the check names it', async () => {
    const h = await healthy();
    const [{ rootpage }] = (await rawRows(h.rt, "SELECT rootpage FROM sqlite_master WHERE name = 'processes_parent'")) as {
      rootpage: number;
    }[];
    const [{ page_size }] = (await rawRows(h.rt, 'PRAGMA page_size')) as { page_size: number }[];
    await h.rt.close(); // checkpoints the write-ahead log into the file
    const fd = openSync(h.path, 'r+');
    writeSync(fd, Buffer.alloc(64, 0x5a), 0, 64, rootpage! * page_size! - 64); // the end of the page holds its cells
    closeSync(fd);
    const rt = await h.reopen();
    expect((await checkReopened(rt, h.journal, h.effects())).filter((v) => v.startsWith('integrity_check: '))).toHaveLength(1);
  });
});
