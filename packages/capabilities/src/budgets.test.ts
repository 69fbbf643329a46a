import { LibosError } from '@libos/sdk';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { A, B, C, D } from './internal/testing/helpers.js';
import { createTestStore, type TestStore } from './internal/testing/test-store.js';

let s: TestStore;
beforeEach(async () => {
  s = await createTestStore();
});
afterEach(() => s.close());

const b = <T>(fn: (budgets: ReturnType<TestStore['engine']['budgets']>) => Promise<T>, opts?: { failEvents?: boolean }) =>
  s.run((scope) => fn(s.engine.budgets(scope)), opts);
const usageOf = async (pid: string) => (await b((x) => x.usage(pid))).usage;
const accountRows = () => s.db.selectFrom('cap_budget_accounts').select(['pid', 'status']).orderBy('pid').execute();

describe('budgets', () => {
  it('root defaults: 256 tool calls, 16 child processes, the rest unlimited', async () => {
    await b((x) => x.openAccount(A, null));
    const u = await b((x) => x.usage(A));
    expect(u.limits).toMatchObject({ tool_calls: 256, child_processes: 16, llm_calls: null, llm_total_tokens: null });
    expect(u.remaining).toMatchObject({ tool_calls: 256, child_processes: 16, llm_calls: null });
  });

  it('[CAP-43] the first charge of a root reads its budget state in one statement, of a grandchild in two', async () => {
    const sqlite = new Database(':memory:');
    const store = await createTestStore({ sqlite });
    try {
      let reads = 0;
      const prepare = sqlite.prepare.bind(sqlite);
      sqlite.prepare = ((source: string) => {
        const stmt = prepare(source);
        if (stmt.reader && source.includes('"cap_budget_accounts"')) reads++;
        return stmt;
      }) as typeof sqlite.prepare;
      const budgets = <T>(fn: (x: ReturnType<TestStore['engine']['budgets']>) => Promise<T>) =>
        store.run((scope) => fn(store.engine.budgets(scope)));
      await budgets((x) => x.openAccount(A, null));
      await budgets((x) => x.openAccount(B, A));
      await budgets((x) => x.openAccount(C, B));
      await budgets((x) => x.openAccount(D, null));
      const readsOf = async (fn: () => Promise<unknown>) => {
        reads = 0;
        await fn();
        return reads;
      };
      // D's ancestors are not known yet (opening a child reads its parent's state; D has none): a root's own row says
      // it has no ancestors, so that one read is the whole state.
      expect(await readsOf(() => budgets((x) => x.charge(D, { tool_calls: 1 })))).toBe(1);
      expect(await readsOf(() => budgets((x) => x.charge(A, { tool_calls: 1 })))).toBe(1);
      // A grandchild's row names its chain, read next; once known, one read each.
      expect(await readsOf(() => budgets((x) => x.charge(C, { tool_calls: 1 })))).toBe(2);
      expect(await readsOf(() => budgets((x) => x.charge(C, { tool_calls: 1 })))).toBe(1);
      const used = await budgets(async (x) => [(await x.usage(A)).usage, (await x.usage(C)).usage, (await x.usage(D)).usage]);
      expect(used.map((u) => u.tool_calls)).toEqual([3, 2, 1]);
      const missing = 'pid_00000000000000ff';
      await expect(budgets((x) => x.charge(missing, { tool_calls: 1 }))).rejects.toMatchObject({
        code: 'not_found',
        details: { pid: missing },
      });
    } finally {
      await store.close();
    }
  });

  it('[CAP-42] maxToolCalls 2: the 3rd charge is refused naming field, pid, limit and load; usage 2; not killed', async () => {
    await b((x) => x.openAccount(A, null, { tool_calls: 2 }));
    await b((x) => x.charge(A, { tool_calls: 1 }));
    await b((x) => x.charge(A, { tool_calls: 1 }));
    const err = await b((x) => x.charge(A, { tool_calls: 1 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LibosError);
    expect(err).toMatchObject({ code: 'resource_limit_exceeded', details: { field: 'tool_calls', pid: A, limit: 2, load: 3 } });
    expect((err as Error).message).toMatch(/tool_calls: limit 2 of pid_000000000000000a/);
    expect((await usageOf(A)).tool_calls).toBe(2);
    expect(await accountRows()).toEqual([{ pid: A, status: 'open' }]);
  });

  it('[CAP-43] a charge hits the pid and every ancestor; a failing write leaves all unchanged', async () => {
    await b((x) => x.openAccount(A, null));
    await b((x) => x.openAccount(B, A));
    await b((x) => x.openAccount(C, B));
    await b((x) => x.charge(C, { tool_calls: 1 }));
    expect([(await usageOf(A)).tool_calls, (await usageOf(B)).tool_calls, (await usageOf(C)).tool_calls]).toEqual([1, 1, 1]);
    await expect(b((x) => x.charge(C, { tool_calls: 1 }), { failEvents: true })).rejects.toThrow('event sink failed');
    expect([(await usageOf(A)).tool_calls, (await usageOf(B)).tool_calls, (await usageOf(C)).tool_calls]).toEqual([1, 1, 1]);
    expect(s.events.filter((e) => e.type === 'resource.charged').at(-1)!.data).toMatchObject({ pid: C, chargedPids: [C, B, A] });
  });

  it(`a child gets half of the parent's remaining (tool_calls ≥ 1), reserved from the parent, and the parent is charged child_processes \
1`, async () => {
    await b((x) => x.openAccount(A, null, { tool_calls: 10, llm_total_tokens: 1000 }));
    await b((x) => x.openAccount(B, A));
    const child = await b((x) => x.usage(B));
    expect(child.limits).toMatchObject({ tool_calls: 5, child_processes: 7, llm_total_tokens: 500, llm_calls: null });
    const parent = await b((x) => x.usage(A));
    expect(parent.usage.child_processes).toBe(1);
    expect(parent.remaining).toMatchObject({ tool_calls: 5, child_processes: 8, llm_total_tokens: 500 });
    // A child's charge drains the envelope the parent holds: the parent's remaining does not move.
    await b((x) => x.charge(B, { tool_calls: 2 }));
    expect((await b((x) => x.usage(A))).remaining.tool_calls).toBe(5);
    expect((await b((x) => x.usage(B))).remaining.tool_calls).toBe(3);
  });

  it('[CAP-44] overage past a parent limit kills the parent with its subtree and throws killPids', async () => {
    await b((x) => x.openAccount(A, null, { llm_total_tokens: 10 }));
    await b((x) => x.openAccount(B, A, { llm_total_tokens: null }));
    const err = await s.run(async (scope) => {
      // The kernel's contract: catch, commit the transaction, then kill details.killPids.
      try {
        await s.engine.budgets(scope).charge(B, { llm_total_tokens: 11 }, { allowOverage: true });
        return null;
      } catch (e) {
        return e as LibosError;
      }
    });
    expect(err).toMatchObject({ code: 'resource_limit_exceeded', details: { field: 'llm_total_tokens', pid: A, limit: 10, load: 11 } });
    expect([...(err!.details!.killPids as string[])].sort()).toEqual([A, B]);
    expect(await accountRows()).toEqual([
      { pid: A, status: 'killed' },
      { pid: B, status: 'killed' },
    ]);
    expect((await usageOf(B)).llm_total_tokens).toBe(11);
    expect(s.events.find((e) => e.type === 'resource.limit_exceeded')!.data).toMatchObject({ severity: 'critical', ownerPid: A });
    await expect(b((x) => x.charge(B, { tool_calls: 1 }))).rejects.toMatchObject({
      code: 'resource_limit_exceeded',
      details: { killed: true },
    });
  });

  it('overage kills only the nearest member now over (and its subtree)', async () => {
    await b((x) => x.openAccount(A, null, { llm_total_tokens: 100 }));
    await b((x) => x.openAccount(B, A, { llm_total_tokens: 10 }));
    await b((x) => x.openAccount(C, B, { llm_total_tokens: null }));
    const out = await b((x) => x.chargeOverage(C, { llm_total_tokens: 12 }));
    expect(out.exceeded).toMatchObject({ pid: B, field: 'llm_total_tokens', limit: 10 });
    expect([...out.killPids].sort()).toEqual([B, C]);
    expect((await accountRows()).find((r) => r.pid === A)!.status).toBe('open');
  });

  it('[CAP-45] envelopes: parent 5, child 3 ⇒ remaining 2; a sibling of 3 is refused; after the child exits it fits', async () => {
    await b((x) => x.openAccount(A, null, { tool_calls: 5 }));
    await b((x) => x.openAccount(B, A, { tool_calls: 3 }));
    expect((await b((x) => x.remaining(A))).tool_calls).toBe(2);
    await expect(b((x) => x.openAccount(C, A, { tool_calls: 3 }))).rejects.toMatchObject({
      code: 'resource_limit_exceeded',
      details: { field: 'tool_calls', remaining: 2 },
    });
    expect((await accountRows()).map((r) => r.pid)).toEqual([A, B]);
    expect((await usageOf(A)).child_processes).toBe(1);
    await b((x) => x.charge(B, { tool_calls: 1 }));
    await b((x) => x.closeAccount(B));
    expect((await b((x) => x.remaining(A))).tool_calls).toBe(4);
    await b((x) => x.openAccount(C, A, { tool_calls: 3 }));
  });

  it('[CAP-46] maxChildProcesses 0: opening a child throws; no row, no reservation, usage 0', async () => {
    await b((x) => x.openAccount(A, null, { child_processes: 0 }));
    await expect(b((x) => x.openAccount(B, A))).rejects.toMatchObject({
      code: 'resource_limit_exceeded',
      details: { field: 'child_processes', pid: A, limit: 0 },
    });
    expect(await accountRows()).toEqual([{ pid: A, status: 'open' }]);
    expect((await usageOf(A)).child_processes).toBe(0);
  });

  it('[CAP-47] provider envelope of 10: settling 11 fails, chargeMaximum charges 10, a second settle is refused', async () => {
    await b((x) => x.openAccount(A, null, { llm_total_tokens: 100 }));
    const r1 = await b((x) => x.reserveUsage(A, { llm_total_tokens: 10 }));
    expect((await b((x) => x.remaining(A))).llm_total_tokens).toBe(90);
    await expect(b((x) => x.settleUsage(r1, { llm_total_tokens: 11 }))).rejects.toMatchObject({ code: 'invalid_arguments' });
    await b((x) => x.chargeMaximum(r1));
    expect((await usageOf(A)).llm_total_tokens).toBe(10);
    expect((await b((x) => x.remaining(A))).llm_total_tokens).toBe(90);
    const r2 = await b((x) => x.reserveUsage(A, { llm_total_tokens: 10 }));
    await b((x) => x.settleUsage(r2, { llm_total_tokens: 4 }));
    await expect(b((x) => x.settleUsage(r2, { llm_total_tokens: 4 }))).rejects.toMatchObject({ code: 'conflict' });
    expect((await usageOf(A)).llm_total_tokens).toBe(14);
    const r3 = await b((x) => x.reserveUsage(A, { llm_total_tokens: 50 }));
    await b((x) => x.releaseUsage(r3));
    expect((await b((x) => x.remaining(A))).llm_total_tokens).toBe(86);
    await expect(b((x) => x.reserveUsage(A, { llm_total_tokens: 87 }))).rejects.toMatchObject({ code: 'resource_limit_exceeded' });
  });

  it("a grandchild charge within its own limit but over the grandparent's is refused and charges nothing anywhere", async () => {
    await b((x) => x.openAccount(A, null, { llm_total_tokens: 100 }));
    await b((x) => x.openAccount(B, A, { llm_total_tokens: null }));
    await b((x) => x.openAccount(C, B, { llm_total_tokens: 50 }));
    await b((x) => x.charge(A, { llm_total_tokens: 90 }));
    const before = await Promise.all([A, B, C].map(usageOf));
    await expect(b((x) => x.charge(C, { llm_total_tokens: 20 }))).rejects.toMatchObject({
      code: 'resource_limit_exceeded',
      details: { field: 'llm_total_tokens', pid: A, limit: 100, load: 110 },
    });
    expect(await Promise.all([A, B, C].map(usageOf))).toEqual(before);
    expect((await usageOf(C)).llm_total_tokens).toBe(0);
    expect(s.audit.filter((e) => e.action === 'resource.charge' && e.target === C)).toHaveLength(0);
  });

  it('preflight of a batch is all-or-nothing and charges nothing', async () => {
    await b((x) => x.openAccount(A, null, { tool_calls: 3 }));
    await expect(b((x) => x.preflight(A, { tool_calls: 4 }))).rejects.toMatchObject({ code: 'resource_limit_exceeded' });
    await b((x) => x.preflight(A, { tool_calls: 3 }));
    expect((await usageOf(A)).tool_calls).toBe(0);
  });

  it('validates usage and limits, naming the field', async () => {
    await b((x) => x.openAccount(A, null));
    await expect(b((x) => x.charge(A, { tool_calls: 1.5 }))).rejects.toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringContaining('usage.tool_calls'),
    });
    await expect(b((x) => x.charge(A, { tool_calls: -1 }))).rejects.toMatchObject({ code: 'invalid_arguments' });
    await expect(b((x) => x.charge(A, { bogus: 1 } as never))).rejects.toMatchObject({
      code: 'invalid_arguments',
      message: expect.stringContaining('bogus'),
    });
    await b((x) => x.charge(A, { runtime_seconds: 0.25 }));
    await expect(b((x) => x.openAccount(D, null, { tool_calls: Number.NaN }))).rejects.toMatchObject({ code: 'invalid_arguments' });
    await expect(b((x) => x.openAccount(A, null))).rejects.toMatchObject({ code: 'conflict' });
    await expect(b((x) => x.charge('pid_nobody', { tool_calls: 1 }))).rejects.toMatchObject({ code: 'not_found' });
  });
});
