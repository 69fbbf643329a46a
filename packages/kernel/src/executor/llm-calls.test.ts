import { describe, expect, it } from 'vitest';
import type { LlmMessage } from '../llm/provider.js';
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { kernelStores } from '../internal/testing/kernel-store.js';
import { kernelMigrations } from '../store/kernel-schema.js';
import { migrate } from '../store/migrate.js';
import { openSqliteStore } from '../store/sqlite/open-sqlite.js';
import { CommittedTexts } from './committed-texts.js';
import type { OpenedStore } from '../store/opened-store.js';
import { queryLlmCalls, recordLlmCall, type LlmCallInput } from './llm-calls.js';
import { SeenTexts } from './prompt-texts.js';

const store = kernelStores();

const call = (id: string, messages: LlmMessage[], persistFullIo = true): LlmCallInput => ({
  id,
  pid: 'pid_0000000000000001',
  imageId: 'base-agent:v0',
  provider: 'scripted',
  model: 'scripted',
  request: { messages, tools: [{ name: 'process_exit', description: 'Ends.', parameters: { type: 'object' } }], parallelToolCalls: true },
  response: null,
  error: null,
  latencyMs: 1,
  createdAt: new Date(0).toISOString(),
  persistFullIo,
});

/** How many rows `llm_texts` holds. */
async function textRows(s: OpenedStore): Promise<number> {
  const row = await s.db
    .selectFrom('llm_texts')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const SKILLS = Array.from({ length: 40 }, (_, i) => `## skill ${i}\n${'a long Skill body line. '.repeat(20)}`).join('\n\n');

describe('llm_calls: prompts stored by hash', () => {
  it('a prompt reads back byte for byte, and the paragraphs two prompts share are stored once', async () => {
    const s = await store();
    const first: LlmMessage[] = [
      { role: 'system', content: 'You are a libOS process.' },
      { role: 'user', content: `Goal:\nkeep a ledger\n\n${SKILLS}\n\nRecent events:\n- tool_called get_current_time\n\n` },
    ];
    const second: LlmMessage[] = [
      first[0]!,
      { role: 'user', content: `Goal:\nkeep a ledger\n\n${SKILLS}\n\nRecent events:\n- tool_completed` },
    ];
    await recordLlmCall(s.db, call('llm_1', first));
    await recordLlmCall(s.db, call('llm_2', second));
    const rows = await queryLlmCalls(s.db);
    expect(rows.map((r) => (r.request as { messages: LlmMessage[] }).messages)).toEqual([first, second]);
    expect(rows[0]!.request).toMatchObject({ tools: ['process_exit'], parallel_tool_calls: true });
    const stored = await s.db
      .selectFrom('llm_texts')
      .select((eb) => eb.fn.sum<number>(eb.fn('length', ['text'])).as('n'))
      .executeTakeFirstOrThrow();
    const sent = [...first, ...second].reduce((n, m) => n + m.content.length, 0);
    // the shared Skill paragraphs once, not twice (and the group lists, about a tenth of them)
    expect(Number(stored.n)).toBeLessThan(sent * 0.6);
    const raw = await s.db.selectFrom('llm_calls').select('request').where('id', '=', 'llm_2').executeTakeFirstOrThrow();
    expect((raw.request as string).length).toBeLessThan(second[1]!.content.length / 5); // hashes, not the 20 KB prompt
  });

  it('[K-9.10] a call stores group keys; a prompt that repeats another adds only its new paragraph and groups', async () => {
    const s = await store();
    const prompt = (pid: string, tail: string): LlmMessage[] => [
      { role: 'system', content: 'You are a libOS process.' },
      { role: 'user', content: `Process: ${pid}\n\nGoal:\nkeep a ledger\n\n${SKILLS}\n\nRecent events:\n${tail}` },
    ];
    await recordLlmCall(s.db, call('llm_1', prompt('pid_1', '- none')));
    const before = await textRows(s);
    await recordLlmCall(s.db, call('llm_2', prompt('pid_2', '- none')));
    const raw = await s.db.selectFrom('llm_calls').select('request').where('id', '=', 'llm_2').executeTakeFirstOrThrow();
    const stored = JSON.parse(raw.request as string) as { format: string; messages: { groups: string[] }[] };
    expect(stored.format).toBe('llm_texts/v3');
    // 43 paragraphs in about 8 groups: the row names groups, not paragraphs
    expect(stored.messages[1]!.groups.length).toBeLessThan(15);
    expect(raw.request.length).toBeLessThan(1000);
    // only the new first paragraph (the process line) and the group it stands in are new
    expect((await textRows(s)) - before).toBe(2);
    const rows = await queryLlmCalls(s.db);
    expect(rows.map((r) => (r.request as { messages: LlmMessage[] }).messages)).toEqual([
      prompt('pid_1', '- none'),
      prompt('pid_2', '- none'),
    ]);
  });

  it('[K-9.10] a text is stored inline the first time a runtime sends it and as a row from the second time on', async () => {
    const s = await store();
    const seen = new SeenTexts();
    const prompt = (tail: string): LlmMessage[] => [
      { role: 'user', content: `Goal:\nkeep a ledger\n\n${SKILLS}\n\nRecent events:\n${tail}` },
    ];
    const request = async (id: string) =>
      (await s.db.selectFrom('llm_calls').select('request').where('id', '=', id).executeTakeFirstOrThrow()).request as string;
    await recordLlmCall(s.db, { ...call('llm_1', prompt('- a')), seen });
    expect(await textRows(s)).toBe(0); // all inline: nothing repeated yet
    const first = JSON.parse(await request('llm_1')) as { messages: { groups: unknown[] }[] };
    expect(first.messages[0]!.groups.every((g) => Array.isArray(g) && g.every((e) => typeof e === 'object'))).toBe(true);
    await recordLlmCall(s.db, { ...call('llm_2', prompt('- b')), seen });
    const rows = await textRows(s);
    expect(rows).toBeGreaterThan(40); // the repeated Skill paragraphs and their groups became rows
    expect((await request('llm_2')).length).toBeLessThan(SKILLS.length / 10); // keys and the new tail, no Skill text
    // llm_2 listed each group's paragraph keys (its groups were new); from the next prompt on they are rows too
    const listed = (JSON.parse(await request('llm_2')) as { messages: { groups: unknown[] }[] }).messages[0]!.groups.filter(
      (g) => Array.isArray(g) && g.every((k) => typeof k === 'string'),
    ).length;
    await recordLlmCall(s.db, { ...call('llm_3', prompt('- b')), seen });
    // at most those groups, the repeated tail paragraph and the group it now ends
    expect((await textRows(s)) - rows).toBeLessThanOrEqual(listed + 2);
    await recordLlmCall(s.db, { ...call('llm_4', prompt('- b')), seen });
    const before = await textRows(s);
    await recordLlmCall(s.db, { ...call('llm_5', prompt('- b')), seen });
    expect(await textRows(s)).toBe(before); // a prompt sent three times before: nothing new
    expect((await request('llm_5')).length).toBeLessThan(600); // a few group keys
    const read = await queryLlmCalls(s.db);
    expect(read.map((r) => (r.request as { messages: LlmMessage[] }).messages)).toEqual([prompt('- a'), ...Array(4).fill(prompt('- b'))]);
  });

  it('[K-9.10] a row stored in the earlier format (hex sha256 of each paragraph) still reads back', async () => {
    const s = await store();
    const hex = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');
    const paragraphs = ['Goal:\nkeep a ledger', 'Recent events:\n- none'];
    await s.db
      .insertInto('llm_texts')
      .values(paragraphs.map((text) => ({ sha256: hex(text), text })))
      .execute();
    await recordLlmCall(s.db, call('llm_1', [{ role: 'user', content: 'placeholder' }]));
    const request = { format: 'llm_texts/v1', messages: [{ role: 'user', text_sha256: paragraphs.map(hex) }], tools: ['process_exit'] };
    await s.db
      .updateTable('llm_calls')
      .set({ request: JSON.stringify(request) })
      .where('id', '=', 'llm_1')
      .execute();
    const [row] = await queryLlmCalls(s.db);
    expect(row!.request).toEqual({ messages: [{ role: 'user', content: paragraphs.join('\n\n') }], tools: ['process_exit'] });
  });

  it('[K-9.11] new text is one inline run, deflated when long; the paragraphs before it become one group key', async () => {
    const s = await store();
    const seen = new SeenTexts();
    const events = (n: number) =>
      Array.from({ length: n }, (_, i) => `- resource.charged {"pid":"pid_0000000000000001","usage":{"tool_calls":${i}}}`).join('\n');
    const prompt = (tail: string): LlmMessage[] => [
      {
        role: 'user',
        content: `Process: pid_1\n\nGoal:\nkeep a ledger\n\n${SKILLS}\n\nRecent events:\n${tail}\n\nRecent tool calls:\n- none`,
      },
    ];
    for (const [id, n] of [
      ['llm_1', 1],
      ['llm_2', 2],
      ['llm_3', 30],
    ] as const)
      await recordLlmCall(s.db, { ...call(id, prompt(events(n))), seen });
    const raw = await s.db.selectFrom('llm_calls').select('request').where('id', '=', 'llm_3').executeTakeFirstOrThrow();
    const stored = JSON.parse(raw.request as string) as { format: string; messages: { groups: unknown[] }[] };
    expect(stored.format).toBe('llm_texts/v3');
    const groups = stored.messages[0]!.groups;
    const inline = groups.filter((g) => Array.isArray(g) && g.some((e) => typeof e === 'object'));
    // the 30 new event lines and the tool-call paragraph after them: one run, deflated
    expect(inline).toEqual([[{ deflated: expect.any(String) }]]);
    // the Skill paragraphs before the run: group keys only (22-character keys), no list of paragraph keys
    expect(groups.filter((g) => typeof g === 'string').every((g) => /^[\w-]{22}$/.test(g as string))).toBe(true);
    expect(groups.filter((g) => Array.isArray(g) && g.every((e) => typeof e === 'string'))).toEqual([]);
    const tail = `Recent events:\n${events(30)}\n\nRecent tool calls:\n- none`;
    expect(raw.request.length).toBeLessThan(tail.length / 2);
    const read = await queryLlmCalls(s.db);
    expect(read.map((r) => (r.request as { messages: LlmMessage[] }).messages)).toEqual([1, 2, 30].map((n) => prompt(events(n))));
  });

  it('[K-9.11] a row of the K-9.10 format (43-character keys, plain inline text) still reads back', async () => {
    const s = await store();
    const key = (t: string) => createHash('sha256').update(t, 'utf8').digest('base64url');
    const [goal, skill] = ['Goal:\nkeep a ledger', '## skill 0\nbody'];
    const group = [key(goal), key(skill)].join('\n');
    const texts = [goal, skill, group].map((text) => ({ sha256: key(text), text }));
    await s.db.insertInto('llm_texts').values(texts).execute();
    await recordLlmCall(s.db, call('llm_1', [{ role: 'user', content: 'placeholder' }]));
    const messages = [
      { role: 'user', groups: [[{ text: 'Process: pid_1' }], key(group), [key(goal), { text: 'Recent events:\n- none' }]] },
    ];
    await s.db
      .updateTable('llm_calls')
      .set({ request: JSON.stringify({ format: 'llm_texts/v2', messages, tools: [] }) })
      .where('id', '=', 'llm_1')
      .execute();
    const [row] = await queryLlmCalls(s.db);
    const content = ['Process: pid_1', goal, skill, goal, 'Recent events:\n- none'].join('\n\n');
    expect(row!.request).toEqual({ messages: [{ role: 'user', content }], tools: [] });
  });

  it('[K-9.11] a deflated text that does not inflate is store_corrupt', async () => {
    const s = await store();
    await recordLlmCall(s.db, call('llm_1', [{ role: 'user', content: 'placeholder' }]));
    const request = { format: 'llm_texts/v3', messages: [{ role: 'user', groups: [[{ deflated: 'bm90IGRlZmxhdGU=' }]] }], tools: [] };
    await s.db
      .updateTable('llm_calls')
      .set({ request: JSON.stringify(request) })
      .where('id', '=', 'llm_1')
      .execute();
    await expect(queryLlmCalls(s.db)).rejects.toMatchObject({ code: 'store_corrupt', message: expect.stringContaining('deflated') });
  });

  it('without full I/O only a preview and the hash are kept, and no paragraph is stored', async () => {
    const s = await store();
    await recordLlmCall(s.db, call('llm_1', [{ role: 'user', content: SKILLS }], false));
    const [row] = await queryLlmCalls(s.db);
    expect(row!.request).toMatchObject({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), preview: expect.any(String) });
    expect(await s.db.selectFrom('llm_texts').selectAll().execute()).toEqual([]);
  });

  it('a stored prompt whose paragraphs are gone is store_corrupt, naming the table', async () => {
    const s = await store();
    await recordLlmCall(s.db, call('llm_1', [{ role: 'user', content: 'one\n\ntwo' }]));
    await s.db.deleteFrom('llm_texts').execute();
    await expect(queryLlmCalls(s.db)).rejects.toMatchObject({ code: 'store_corrupt', message: expect.stringContaining('llm_texts') });
  });
});

describe('[K-15.28] prompt texts a committed transaction stored', () => {
  /**
   * A store whose llm_texts inserts are counted as SQLite runs them (rows each carries): a prepared query is compiled
   * once, so the count is taken from the statements the connection runs, not from kysely's compiles.
   */
  async function countingStore() {
    const inserts: number[] = [];
    const prepare = Database.prototype.prepare;
    Database.prototype.prepare = function (this: Database.Database, source: string) {
      const statement = prepare.call(this, source) as Database.Statement<unknown[]>;
      if (!source.startsWith('insert into "llm_texts"')) return statement;
      const rows = source.match(/\(\?, \?\)/g)?.length ?? 0;
      const run = statement.run.bind(statement);
      statement.run = (...params: unknown[]) => {
        inserts.push(rows);
        return run(...params);
      };
      return statement;
    } as typeof prepare;
    const s = openSqliteStore(':memory:');
    await migrate(s.db, [{ owner: '@libos/kernel', migrations: kernelMigrations }], () => new Date(0).toISOString());
    const close = s.close.bind(s);
    return { s: { db: s.db, close: () => ((Database.prototype.prepare = prepare), close()) }, inserts };
  }
  const prompt = (tail: string): LlmMessage[] => [
    { role: 'user', content: `Goal:\nkeep a ledger\n\n${SKILLS}\n\nRecent events:\n${tail}` },
  ];

  it('[K-15.28] texts are noted once their transaction commits; then a call sends none of them', async () => {
    const { s, inserts } = await countingStore();
    const texts = new CommittedTexts();
    const hooks: (() => void)[] = [];
    const committed = { texts, afterCommit: (fn: () => void) => void hooks.push(fn) };
    try {
      await recordLlmCall(s.db, { ...call('llm_1', prompt('- one')), committed }); // every text by key (no `seen`)
      expect(inserts).toHaveLength(1);
      const stored = (await s.db.selectFrom('llm_texts').select('sha256').execute()).map((r) => r.sha256);
      // Not before the commit: a rollback would leave none of these rows.
      expect(stored.some((k) => texts.has(k))).toBe(false);
      for (const fn of hooks.splice(0)) fn(); // the transaction committed
      expect(stored.every((k) => texts.has(k))).toBe(true);
      await recordLlmCall(s.db, { ...call('llm_2', prompt('- one')), committed });
      expect(inserts).toHaveLength(1); // all stored: no statement at all
      await recordLlmCall(s.db, { ...call('llm_3', prompt('- two')), committed });
      expect(inserts).toHaveLength(2);
      expect(inserts[1]).toBeLessThan(inserts[0]! / 4); // only what is new: the events paragraph and the groups that hold it
      // Without the committed texts every text goes again (the server skips them: ON CONFLICT).
      await recordLlmCall(s.db, call('llm_4', prompt('- two')));
      expect(inserts[2]).toBeGreaterThan(inserts[1]! * 4);
      const rows = await queryLlmCalls(s.db);
      expect(rows.map((r) => (r.request as { messages: LlmMessage[] }).messages[0]!.content)).toEqual([
        prompt('- one')[0]!.content,
        prompt('- one')[0]!.content,
        prompt('- two')[0]!.content,
        prompt('- two')[0]!.content,
      ]);
    } finally {
      await s.close();
    }
  });
});
