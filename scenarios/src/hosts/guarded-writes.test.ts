// Guarded writes on PostgreSQL (K-15.23): a budget charge's compare-and-set rides with the unit's next round trip and
// fails the unit there when it misses. The miss is made here as a writer behind the runtime's back would make it: the
// account row changed by another connection while the runtime's memo still holds what it read.
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime } from '@libos/kernel';
import { definePlugin, defineTool, LibosError, skillFromText, z } from '@libos/sdk';
import { session } from '@libos/session';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, PG_URL, probePostgres, watchQueries } from '../support/postgres.js';

const unavailable = await probePostgres(PG_URL);
const { schema, url } = freshSchema('t_guards');

/** What happened, in order: every query `pg` sent (`sql: …`) and every run of the effect tool (`effect: …`). */
const log: string[] = [];

/** `poke_world` acts outside the store (`policy.sideEffects`): it logs that it ran. */
function effectsPlugin() {
  const tool = defineTool({
    name: 'poke_world',
    description: 'Acts outside the store.',
    input: z.object({ label: z.string().min(1).max(64) }),
    policy: { sideEffects: true },
    run({ label }) {
      log.push(`effect: ${label}`);
      return { label };
    },
  });
  const refuse = defineTool({
    name: 'refuse_label',
    description: 'Refuses every label, after its charge.',
    input: z.object({ label: z.string().min(1).max(64) }),
    run({ label }) {
      throw new LibosError('invalid_arguments', `label: ${label} is refused`, { details: { field: 'label' } });
    },
  });
  const md = '---\nname: test-effects\ndescription: Effects.\nallowed-tools: poke_world refuse_label\n---\nCall poke_world.\n';
  return definePlugin({
    name: 'test-effects',
    version: '0.0.0',
    skills: [skillFromText(md, 'test-effects')],
    tools: [tool, refuse],
    images: [
      {
        id: 'effects:v0',
        description: 'poke_world and the clock.',
        systemPrompt: 'Poke.',
        promptMode: 'libos_default',
        defaultSkills: ['test-effects', 'agent-libos-runtime-session'],
        defaultTools: ['poke_world', 'refuse_label', 'get_current_time'],
      },
    ],
  });
}

/** Logs every query text `pg` sends while `fn` runs. */
const logged = <T>(fn: () => Promise<T>): Promise<T> => watchQueries(fn, (text) => log.push(`sql: ${text}`));

/** Sets the account's usage from a connection of its own: the runtime's memo still holds the usage it wrote. */
async function changeBehind(pid: string, toolCalls: number): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    const r = await c.query(`update ${schema}.cap_budget_accounts set usage = $1 where pid = $2`, [
      JSON.stringify({ tool_calls: toolCalls }),
      pid,
    ]);
    expect(r.rowCount).toBe(1);
  } finally {
    await c.end();
  }
}

describe.skipIf(unavailable !== null)('[K-15.23] guarded writes on PostgreSQL', () => {
  let rt: Runtime;
  beforeAll(async () => {
    rt = await openRuntime({ path: url, plugins: [capabilities(), session(), effectsPlugin()] });
  });
  afterAll(async () => {
    await rt?.close();
    await dropSchema(schema);
  });

  it('[K-15.23] a charge that misses fails the call as conflict naming the account, uncharged; the next call charges', async () => {
    const p = await rt.spawn({ goal: 'miss', image: 'effects:v0', budget: { tool_calls: 100 } });
    await rt.grant(p.pid, 'clock:now', ['read']);
    const first = await rt.call(p.pid, 'get_current_time', {});
    expect(first.ok ? 'ok' : first.error.message).toBe('ok');
    await changeBehind(p.pid, 40);
    const eventsBefore = (await rt.events({ pid: p.pid, limit: 1000 })).length;
    const r = await rt.call(p.pid, 'get_current_time', {});
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('conflict');
    expect(r.error.message).toContain(`budget account ${p.pid} changed concurrently`);
    // Nothing of the call's unit was kept: only its failure record, which charged nothing.
    expect((await rt.budget(p.pid)).usage.tool_calls).toBe(40);
    const calls = (await rt.audit({ pid: p.pid, action: 'tool.call', limit: 10 })).map((a) => [a.decision, a.details.charged]);
    expect(calls).toEqual([
      ['ok', undefined],
      ['conflict', false],
    ]);
    const added = (await rt.events({ pid: p.pid, limit: 1000 })).slice(eventsBefore).map((e) => e.type);
    expect(added).toEqual(['tool_failed']); // tool_called went with the unit the miss rolled back
    // The rollback dropped the stale memo: the next charge reads the row as it is and counts on from it.
    expect((await rt.call(p.pid, 'get_current_time', {})).ok).toBe(true);
    expect((await rt.budget(p.pid)).usage.tool_calls).toBe(41);
  });

  it('[K-15.23] a run that fails after its charge rolls the held-back charge back with the memo: refusals count one each', async () => {
    const p = await rt.spawn({ goal: 'refused', image: 'effects:v0', budget: { tool_calls: 100 } });
    for (const label of ['a', 'b', 'c']) {
      const r = await rt.call(p.pid, 'refuse_label', { label });
      expect(r.ok ? 'ok' : r.error.message).toBe(`label: ${label} is refused`);
    }
    expect((await rt.budget(p.pid)).usage.tool_calls).toBe(3);
    const calls = (await rt.audit({ pid: p.pid, action: 'tool.call', limit: 10 })).map((a) => [a.decision, a.details.charged]);
    expect(calls).toEqual(Array.from({ length: 3 }, () => ['invalid_arguments', true]));
  });

  it('[K-15.23] a tool with side effects runs only after its charge went to the server, and not at all when it missed', async () => {
    const p = await rt.spawn({ goal: 'effects', image: 'effects:v0', budget: { tool_calls: 100 } });
    const warm = await rt.call(p.pid, 'poke_world', { label: 'warm' });
    expect(warm.ok ? 'ok' : warm.error.message).toBe('ok');
    log.length = 0;
    expect((await logged(() => rt.call(p.pid, 'poke_world', { label: 'second' }))).ok).toBe(true);
    const effectAt = log.indexOf('effect: second');
    const chargeAt = log.findIndex((l) => /^sql: .*update "cap_budget_accounts"/s.test(l));
    expect(chargeAt).toBeGreaterThanOrEqual(0);
    expect(chargeAt).toBeLessThan(effectAt);
    await changeBehind(p.pid, 7);
    log.length = 0;
    const r = await logged(() => rt.call(p.pid, 'poke_world', { label: 'third' }));
    expect(r.ok ? 'ok' : r.error.code).toBe('conflict');
    expect(log.filter((l) => l.startsWith('effect:'))).toEqual([]);
    expect((await rt.budget(p.pid)).usage.tool_calls).toBe(7);
  });
});
