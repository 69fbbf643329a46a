import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { notesPluginWithImage } from '../internal/testing/notes-plugin.js';
import { ScriptedProvider } from '../llm/scripted-provider.js';
import { openRuntime, type Runtime } from '../runtime.js';

// Cost per quantum must not grow with the processes and events a store holds (issue 9): every query the scheduler,
// a quantum and a reopen issue on a history table reads it through an index, never a full `SCAN`. The SQL is captured
// as the kernel prepares it, so these are the real queries, and each plan is asked of SQLite (`EXPLAIN QUERY PLAN`).

const HISTORY_TABLES = ['processes', 'events', 'audit_records', 'pending_actions', 'human_requests', 'process_messages', 'llm_calls'];

let dir: string;
const seen = new Set<string>();
const prepare = Database.prototype.prepare;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'libos-plans-'));
  Database.prototype.prepare = function (this: Database.Database, source: string) {
    seen.add(source);
    return prepare.call(this, source);
  } as typeof prepare;
});

afterAll(() => {
  Database.prototype.prepare = prepare;
  rmSync(dir, { recursive: true, force: true });
});

/** The plan lines of `sql` (parameters bound to null: SQLite plans without looking at them). */
async function planOf(rt: Runtime, text: string): Promise<string[]> {
  const params = Array.from({ length: (text.match(/\?/g) ?? []).length }, () => null);
  return rt.transaction(async (scope) => {
    const r = await scope.store.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, params));
    return r.rows.map((row) => row.detail);
  });
}

describe('hot queries read history tables through indexes', () => {
  test('the runnable set, timers, recent events and the reopen rules use their index; nothing scans a history table', async () => {
    const path = join(dir, 'libos.db');
    const rt1 = await openRuntime({ path, plugins: [notesPluginWithImage()] });
    for (let i = 0; i < 3; i++) await rt1.spawn({ image: 'notes-agent:v0', goal: `history ${i}` });
    await rt1.close();
    seen.clear();
    const rt = await openRuntime({ path, plugins: [notesPluginWithImage()] });
    try {
      const provider = new ScriptedProvider({ processes: { '*': [[{ tool: 'note_count', args: {} }]] } });
      await rt.run({ provider, maxQuanta: 6 });
      const statements = [...seen].filter((s) => HISTORY_TABLES.some((t) => s.includes(`"${t}"`)) && /^\s*select/i.test(s));
      const plans = new Map<string, string[]>();
      for (const s of statements) plans.set(s, await planOf(rt, s));
      const planOfQuery = (pattern: RegExp) => {
        const hits = [...plans].filter(([s]) => pattern.test(s));
        expect(hits.length, `a captured query matches ${pattern}`).toBeGreaterThan(0);
        return hits.flatMap(([, p]) => p).join('\n');
      };
      expect(planOfQuery(/from "processes" where "status" = \? order by "created_at", "pid"/)).toMatch(/INDEX processes_status/);
      // The earliest timer (every round); the due-timer sweep runs only when it is due, on the same index.
      expect(planOfQuery(/from "processes" where "wait_kind" = \? order by "wait_deadline"/)).toMatch(/INDEX processes_wait/);
      expect(planOfQuery(/from "events" where "pid" = \? order by "seq" desc/)).toMatch(/INDEX events_by_pid/);
      expect(planOfQuery(/select "pid" from "processes" where "status" = \?$/)).toMatch(/INDEX processes_status/);
      expect(planOfQuery(/from "pending_actions" where "status" = \?$/)).toMatch(/INDEX pending_actions_status/);
      const scans = [...plans].filter(([, p]) => p.some((line) => HISTORY_TABLES.some((t) => new RegExp(`^SCAN ${t}\\b`).test(line))));
      expect(scans.map(([s, p]) => `${s} -> ${p.join('; ')}`)).toEqual([]);
    } finally {
      await rt.close();
    }
  });
});
