import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { DEFAULT_LABELS, sqliteMigrationKit, type Authority, type Decision, type ToolContext, type ToolDefinition } from '@libos/sdk';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { ObjectMemoryDeps } from '../internal/deps.js';
import { migrations } from '../internal/migrations.js';
import { getView, viewRootObjects } from '../internal/view-repo.js';
import { createObjectsService } from '../objects-service.js';
import { createPayloadStore } from '../payload-store.js';
import { appendMemoryObjectTool } from './append-memory-object.js';
import { createMemoryObjectTool } from './create-memory-object.js';
import { readMemoryObjectTool } from './read-memory-object.js';

// The SQL each hot-path tool issues on Object Memory's own tables, counted through kysely's query log. The kernel's
// share (events, audit, grants, budgets) goes through the fakes below, so only this package's statements count.

const PID = 'pid_00000000000000a1';
let database: Database.Database;
let db: Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
let statements: { sql: string; parameters: readonly unknown[] }[];
let deps: ObjectMemoryDeps;
let ctx: ToolContext;

const allow = (resource: string, right: Decision['right']): Decision => ({
  subject: PID,
  resource,
  right,
  allowed: true,
  effect: 'allow',
  reason: 'test',
  matchedIds: [],
});
const authority: Authority = {
  pid: PID,
  check: async (resource, right) => allow(resource, right),
  require: async (resource, right) => allow(resource, right),
  consume: async () => {},
  grantTrusted: async () => 'cap_00000000000000c1',
};

beforeEach(async () => {
  database = new Database(':memory:');
  statements = [];
  db = new Kysely({
    dialect: new SqliteDialect({ database }),
    log: (e) => void (e.level === 'query' && statements.push({ sql: e.query.sql, parameters: e.query.parameters })),
  });
  for (const m of migrations) await m.up(db, sqliteMigrationKit(db));
  deps = { payloads: createPayloadStore() };
  ctx = {
    store: db,
    clock: { now: () => new Date('2026-01-01T00:00:00.000Z') },
    events: { emit: async () => {} },
    audit: { record: async () => {} },
    afterCommit: () => {},
    onRollback: () => {},
    service: () => {
      throw new Error('no services in this test');
    },
    authorityFor: () => authority,
    pid: PID,
    callId: 'call_00000000000000b1',
    toolName: 'test',
    authority,
    budgets: { charge: async () => {}, remaining: async () => ({}) },
    flow: { labels: async () => DEFAULT_LABELS, sources: () => [], taint: async () => {} },
    signal: new AbortController().signal,
    resumed: false,
    wait: () => {
      throw new Error('no waits in this test');
    },
  };
  const objects = createObjectsService(ctx, deps);
  await objects.initProcess(PID);
  const entries = Array.from({ length: 1_000 }, (_, i) => ({ i }));
  await objects.createForProcess(PID, { type: 'plan', name: 'ledger', payload: { entries }, immutable: false });
});
afterEach(async () => db.destroy());

/** Runs a tool as the model would (arguments parsed by its schema) and returns the SQL it issued. */
async function sqlOf(tool: ToolDefinition, raw: Record<string, unknown>, expected: Record<string, unknown> = {}): Promise<string[]> {
  statements = [];
  expect(await tool.run(tool.input.parse(raw), ctx)).toMatchObject(expected);
  return statements.map((s) => s.sql);
}

describe('Object Memory hot path: statements per call', () => {
  test('an append to a 1,000-entry ledger issues two: one name lookup and one conditional update', async () => {
    const sql = await sqlOf(appendMemoryObjectTool(deps), { name: 'ledger', entry: { i: 1_000 } }, { version: 2, length: 1_001 });
    expect(sql).toHaveLength(2);
    expect(sql[0]).toMatch(/^select .* from "om_namespaces" as "n" left join "om_objects"/);
    expect(sql[1]).toMatch(/^update "om_objects" set .*"updated_seq" = \(select coalesce\(max\(updated_seq\)/);
  });

  test('a read issues one statement', async () => {
    expect(await sqlOf(readMemoryObjectTool(deps), { name: 'ledger' }, { version: 1, representation: 'json_value' })).toHaveLength(1);
  });

  test('a create into a process scope with a view issues three: name lookup, row insert, view-root insert', async () => {
    const sql = await sqlOf(createMemoryObjectTool(deps), { type: 'plan', name: 'notes', payload: { entries: [] }, immutable: false });
    expect(sql.map((s) => s.split(' ').slice(0, 3).join(' '))).toEqual([
      'select "o".* from',
      'insert into "om_objects"',
      'insert into "om_view_roots"',
    ]);
  });

  test('view roots: each new Object goes last; a process with no view gets a read_only one holding the root', async () => {
    const create = createMemoryObjectTool(deps);
    await sqlOf(create, { type: 'plan', name: 'a', payload: 1 });
    const roots = () => db.selectFrom('om_view_roots').select(['oid', 'position']).orderBy('position').execute();
    expect((await roots()).map((r) => r.position)).toEqual([0, 1]); // the ledger, then a
    await db.deleteFrom('om_view_roots').execute();
    await db.deleteFrom('om_views').execute();
    const sql = await sqlOf(create, { type: 'plan', name: 'b', payload: 2 });
    expect(sql.filter((s) => s.includes('om_view'))).toHaveLength(4); // insert (no view), view lookup, view insert, insert
    const view = await db.selectFrom('om_views').select(['mode', 'view_id']).executeTakeFirstOrThrow();
    expect(view.mode).toBe('read_only');
    expect(await roots()).toEqual([{ oid: expect.stringMatching(/^obj_/), position: 0 }]);
  });

  test('[OM-69.1] rendering a view of 200 roots issues two statements: the view, then its roots with their Objects', async () => {
    const objects = createObjectsService(ctx, deps);
    for (let i = 0; i < 199; i++) await objects.createForProcess(PID, { type: 'observation', name: `o${i}`, payload: { i } });
    statements = [];
    const view = await objects.renderView(PID, { tokenBudget: 1_000_000 });
    expect(view.manifest).toHaveLength(200);
    expect(view.manifest.every((m) => m.disposition === 'included')).toBe(true);
    expect(statements.map((s) => s.sql.split(' ').slice(0, 4).join(' '))).toEqual([
      'select * from "om_views"',
      'select "r"."oid" as "root_oid",',
    ]);
  });

  test('[OM-69.1] roots read again share their parsed metadata and labels, frozen, until the row changes', async () => {
    const viewId = (await getView(db, PID))!.viewId;
    const [first] = await viewRootObjects(db, viewId);
    const [again] = await viewRootObjects(db, viewId);
    expect(again!.object!.metadata).toBe(first!.object!.metadata);
    expect(again!.object!.labels).toBe(first!.object!.labels);
    expect(Object.isFrozen(first!.object!.metadata.tags)).toBe(true);
    const metadata = JSON.stringify({ ...first!.object!.metadata, title: 'changed' });
    await db.updateTable('om_objects').set({ metadata }).where('oid', '=', first!.oid).execute();
    const [changed] = await viewRootObjects(db, viewId);
    expect(changed!.object!.metadata.title).toBe('changed');
    expect(changed!.object!.labels).toBe(first!.object!.labels);
  });

  test('[OM-77.1] a host create with 300 parents looks them up in two statements, and a missing one is still named', async () => {
    const objects = createObjectsService(ctx, deps);
    const parents: string[] = [];
    for (let i = 0; i < 300; i++)
      parents.push((await objects.createForProcess(PID, { type: 'observation', name: `p${i}`, payload: i })).oid);
    statements = [];
    await objects.createForProcess(PID, { type: 'tool_result', name: 'child', payload: 1, parentOids: parents });
    const sql = statements.map((s) => s.sql);
    expect(sql.filter((s) => /^select "oid", "lifecycle_state", "labels" from "om_objects"/.test(s))).toHaveLength(2);
    expect(sql.filter((s) => s.startsWith('select * from "om_objects"'))).toEqual([]);
    const row = await db.selectFrom('om_objects').select('provenance').where('name', '=', 'child').executeTakeFirstOrThrow();
    expect(JSON.parse(row.provenance).parent_oids).toEqual(expect.arrayContaining(parents));
    const missing = 'obj_ffffffffffffffff';
    const created = objects.createForProcess(PID, { type: 'plan', name: 'orphan', payload: 1, parentOids: [...parents, missing] });
    await expect(created).rejects.toMatchObject({ code: 'parent_not_found', details: { oid: missing } });
  });

  test('[OM-77.2] a host create records its sourceOids unchecked: 300 sources, one released, need no lookup', async () => {
    const audits: { details?: Record<string, unknown> }[] = [];
    ctx = { ...ctx, audit: { record: async (entry) => void audits.push(entry) } };
    const objects = createObjectsService(ctx, deps);
    const sources: string[] = [];
    for (let i = 0; i < 300; i++)
      sources.push((await objects.createForProcess(PID, { type: 'observation', name: `s${i}`, payload: i })).oid);
    const parent = (await objects.createForProcess(PID, { type: 'observation', name: 'parent', payload: 0 })).oid;
    await db.updateTable('om_objects').set({ lifecycle_state: 'released' }).where('oid', '=', sources[7]!).execute();
    statements = [];
    audits.length = 0;
    const sourceOids = [...sources, sources[0]!, parent, 'msg_0000000000000001'];
    await objects.createForProcess(PID, { type: 'tool_result', name: 'child', payload: 1, parentOids: [parent], sourceOids });
    const lookups = statements.filter((s) => /^select "oid", "lifecycle_state", "labels" from "om_objects"/.test(s.sql));
    expect(lookups.map((s) => s.parameters)).toEqual([[parent]]);
    const row = await db.selectFrom('om_objects').select('provenance').where('name', '=', 'child').executeTakeFirstOrThrow();
    expect(JSON.parse(row.provenance).parent_oids).toEqual([parent, ...sources]);
    expect(audits[0]!.details).toMatchObject({ parent_oids: [parent], observed_sources: 300 });
    // A list is filtered once while it is frozen (a flow's); one the caller may still change is read every time.
    const provenanceOf = async (name: string) =>
      JSON.parse((await db.selectFrom('om_objects').select('provenance').where('name', '=', name).executeTakeFirstOrThrow()).provenance);
    const open = [sources[0]!];
    await objects.createForProcess(PID, { type: 'tool_result', name: 'open1', payload: 1, sourceOids: open });
    open.push(sources[1]!);
    await objects.createForProcess(PID, { type: 'tool_result', name: 'open2', payload: 1, sourceOids: open });
    expect((await provenanceOf('open2')).parent_oids).toEqual(sources.slice(0, 2));
    const frozen = Object.freeze([sources[2]!, 'msg_0000000000000002']);
    await objects.createForProcess(PID, { type: 'tool_result', name: 'frozen1', payload: 1, sourceOids: frozen });
    await objects.createForProcess(PID, { type: 'tool_result', name: 'frozen2', payload: 1, sourceOids: frozen });
    expect((await provenanceOf('frozen2')).parent_oids).toEqual([sources[2]]);
    const bad = objects.createForProcess(PID, { type: 'plan', name: 'bad', payload: 1, sourceOids: [5 as unknown as string] });
    await expect(bad).rejects.toMatchObject({ code: 'invalid_arguments', details: { field: 'sourceOids' } });
  });

  test('the name lookup is one probe of the live-name index, not a scan of the namespace', async () => {
    await sqlOf(readMemoryObjectTool(deps), { name: 'ledger' });
    const lookup = statements[0]!;
    const plan = database.prepare(`explain query plan ${lookup.sql}`).all(...(lookup.parameters as unknown[])) as { detail: string }[];
    expect(plan.map((r) => r.detail).join(' | ')).toMatch(/SEARCH o USING INDEX om_objects_live_name \(namespace=\? AND name=\?\)/);
  });
});
