import { DEFAULT_LABELS, canonicalSha256, joinLabels, sqliteMigrationKit, type DataLabels } from '@libos/sdk';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assertModelLabels, assertNotMintingGrant, deriveObjectLabels } from './data-labels.js';
import { checkEgress, validateSinkRules, type SinkRule } from './egress.js';
import { A, ops } from './internal/testing/helpers.js';
import type { Db } from './internal/store.js';
import { countBytesWritten, createTestStore, type TestStore } from './internal/testing/test-store.js';
import { CAPABILITY_MIGRATIONS } from './migrations.js';

const L = (p: Partial<DataLabels>): DataLabels => ({ ...DEFAULT_LABELS, ...p });

let s: TestStore;
let o: ReturnType<typeof ops>;
beforeEach(async () => {
  s = await createTestStore();
  o = ops(s);
});
afterEach(() => s.close());

describe('label join and model guards', () => {
  it('[CAP-48] join keeps the most restrictive: secret / untrusted / unknown', () => {
    const j = joinLabels([
      L({ sensitivity: 'secret', trust_level: 'trusted', integrity: 'verified' }),
      L({ sensitivity: 'public', trust_level: 'untrusted', integrity: 'unknown' }),
    ]);
    expect([j.sensitivity, j.trust_level, j.integrity]).toEqual(['secret', 'untrusted', 'unknown']);
  });

  it('[CAP-49] tenants A+B join to mixed, A+none to A; mixed data never leaves', () => {
    expect(joinLabels([L({ tenant: 'A' }), L({ tenant: 'B' })]).tenant).toBe('mixed');
    expect(joinLabels([L({ tenant: 'A' }), L({})]).tenant).toBe('A');
    expect(checkEgress(joinLabels([L({ tenant: 'A' }), L({ tenant: 'B' })]), 'process:pid_1').decision).toBe('deny');
  });

  it('[CAP-50] a model may not set trust above unknown; a lower request over a secret parent stores secret', () => {
    expect(() => assertModelLabels({ trust_level: 'trusted' })).toThrowError(
      expect.objectContaining({ code: 'label_elevation_denied', message: expect.stringContaining('trust_level') }),
    );
    expect(() => assertModelLabels({ integrity: 'verified' })).toThrowError(expect.objectContaining({ code: 'label_elevation_denied' }));
    expect(
      deriveObjectLabels({ requested: { sensitivity: 'normal', trust_level: 'untrusted' }, parents: [L({ sensitivity: 'secret' })] }),
    ).toMatchObject({ sensitivity: 'secret', trust_level: 'untrusted' });
    expect(deriveObjectLabels({ requested: { sensitivity: 'confidential', tenant: 'acme' }, flow: L({ tenant: 'other' }) })).toMatchObject({
      sensitivity: 'confidential',
      tenant: 'mixed',
    });
  });

  it('a model-facing request below the current flow, or setting declassification authority or origin, is refused', () => {
    const flow = L({ sensitivity: 'confidential' });
    expect(() => assertModelLabels({ sensitivity: 'normal' }, flow)).toThrowError(
      expect.objectContaining({ code: 'label_elevation_denied', message: expect.stringContaining('below') }),
    );
    expect(() => assertModelLabels({ declassification_authority: 'me' }, flow)).toThrowError(
      expect.objectContaining({ code: 'label_elevation_denied' }),
    );
    expect(() => assertModelLabels({ origin: 'trusted-source' }, flow)).toThrowError(
      expect.objectContaining({ code: 'label_elevation_denied' }),
    );
    expect(() => assertModelLabels({ tenant: 'mixed' }, flow)).toThrowError(expect.objectContaining({ code: 'invalid_arguments' }));
    expect(() => assertModelLabels({ colour: 'red' }, flow)).toThrowError(
      expect.objectContaining({ code: 'invalid_arguments', message: expect.stringContaining('colour') }),
    );
    expect(assertModelLabels({ sensitivity: 'secret', trust_level: 'untrusted' }, flow)).toMatchObject({
      sensitivity: 'secret',
      trust_level: 'untrusted',
    });
  });

  it('a model-facing payload that tries to mint a grant is refused', () => {
    expect(() => assertNotMintingGrant({ title: 'notes', tags: ['a'], summary: 'rights and resources are discussed here' })).not.toThrow();
    expect(() => assertNotMintingGrant({ metadata: { extra: [{ resource: 'object:*', rights: ['admin'] }] } })).toThrowError(
      expect.objectContaining({
        code: 'delegation_denied',
        details: expect.objectContaining({ field: 'payload.metadata.extra[0]', reason: 'grant_minting' }),
      }),
    );
    expect(() => assertNotMintingGrant({ capabilities: ['object:*'] })).toThrowError(
      expect.objectContaining({ code: 'delegation_denied' }),
    );
    expect(() => assertNotMintingGrant({ nested: { Grants: {} } })).toThrowError(expect.objectContaining({ code: 'delegation_denied' }));
  });
});

describe('process flow', () => {
  it('[CAP-55] the high-water survives later normal input and a reopen; it never goes down', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'caps-')), 'flow.db');
    const first = await createTestStore({ file });
    await first.run((scope) => first.engine.flow(scope, A).taint({ sensitivity: 'secret', tenant: 'acme' }, ['obj_secret']));
    await first.run((scope) => first.engine.flow(scope, A).taint({ sensitivity: 'normal' }, ['obj_new']));
    await first.close();
    const reopened = await createTestStore({ file, migrate: false });
    const got = await reopened.run(async (scope) => {
      const f = reopened.engine.flow(scope, A);
      return { labels: await f.labels(), sources: f.sources() };
    });
    expect(got.labels).toMatchObject({ sensitivity: 'secret', tenant: 'acme' });
    expect(got.sources).toEqual(['obj_new', 'obj_secret']);
    await reopened.close();
  });

  it('[CAP-55.1] a new source writes one row: the bytes the 300th distinct source writes are the bytes the first wrote', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'caps-')), 'flow.db');
    const sqlite = new Database(file);
    const written = countBytesWritten(sqlite);
    const first = await createTestStore({ sqlite });
    const taint = async (oid: string) => {
      const before = written.bytes;
      await first.run((scope) => first.engine.flow(scope, A).taint({}, [oid]));
      return written.bytes - before;
    };
    const oid = (i: number) => `obj_${i.toString(16).padStart(16, '0')}`;
    await taint(oid(0)); // the label row's first insert
    const second = await taint(oid(1));
    for (let i = 2; i < 299; i++) await taint(oid(i));
    const last = await taint(oid(299));
    // Before the sources had rows, the 300th rewrote all 300 ids (~7 KB) where the second wrote 2.
    expect(last).toBeLessThanOrEqual(second);
    expect(await taint(oid(7))).toBe(0); // an id already observed writes nothing
    await first.close();
    const reopened = await createTestStore({ file, migrate: false });
    const got = await reopened.run((scope) => reopened.engine.flow(scope, A).snapshot());
    expect(got.sources).toEqual(Array.from({ length: 300 }, (_, i) => oid(i)));
    await reopened.close();
  });

  it("[CAP-55.1] a store written before the sources had rows keeps every process's sources through the migration", async () => {
    const sqlite = new Database(':memory:');
    const db = new Kysely<Record<string, never>>({ dialect: new SqliteDialect({ database: sqlite }) }) as unknown as Db;
    const migrations = CAPABILITY_MIGRATIONS;
    const upgrade = migrations.findIndex((m) => m.name === 'capabilities_0007_process_sources');
    for (const m of migrations.slice(0, upgrade)) await m.up(db, sqliteMigrationKit(db));
    const old = (pid: string, sources: string[]) =>
      db
        .insertInto('cap_process_labels')
        .values({
          pid,
          labels: JSON.stringify({ ...DEFAULT_LABELS, sensitivity: 'secret' }),
          sources: JSON.stringify(sources),
          updated_at: 'x',
        })
        .execute();
    await old(A, ['obj_b', 'obj_a']);
    await old('pid_empty', []);
    for (const m of migrations.slice(upgrade)) await m.up(db, sqliteMigrationKit(db));
    const s2 = await createTestStore({ sqlite, migrate: false });
    const snapshot = (pid: string) => s2.run((scope) => s2.engine.flow(scope, pid).snapshot());
    const got = { a: await snapshot(A), e: await snapshot('pid_empty') };
    expect(got.a).toEqual({ labels: expect.objectContaining({ sensitivity: 'secret' }), sources: ['obj_a', 'obj_b'] });
    expect(got.e.sources).toEqual([]);
    const columns = sqlite.prepare(`select name from pragma_table_info('cap_process_labels')`).all() as { name: string }[];
    expect(columns.map((c) => c.name)).not.toContain('sources');
    await s2.close();
  });

  it('taint in a rolled-back transaction leaves no trace; a fresh process is default', async () => {
    await expect(
      s.run(async (scope) => {
        await s.engine.flow(scope, A).taint({ sensitivity: 'secret' });
        throw new Error('tool failed');
      }),
    ).rejects.toThrow('tool failed');
    expect(await s.run((scope) => s.engine.flow(scope, A).labels())).toEqual(DEFAULT_LABELS);
    await expect(s.run((scope) => s.engine.flow(scope, A).taint({ sensitivity: 'top' as never }))).rejects.toMatchObject({
      code: 'invalid_arguments',
    });
  });
});

describe('declassification', () => {
  it('[CAP-51] lowering without declassification admin is denied; a 1-use grant works once', async () => {
    const declassify = () =>
      s.run((scope) => s.engine.declassify(scope, A, 'obj_1', { sensitivity: 'public' }, { current: L({ sensitivity: 'secret' }) }));
    await expect(declassify()).rejects.toMatchObject({ code: 'declassification_denied' });
    // Object admin is not declassification admin.
    await o.grant({ subject: A, resource: 'object:obj_1', rights: ['admin', 'read', 'write'] });
    await expect(declassify()).rejects.toMatchObject({ code: 'declassification_denied' });
    const g = await o.grant({ subject: A, resource: 'declassification:object:obj_1', rights: ['admin'], usesRemaining: 1 });
    const receipt = await declassify();
    expect(receipt).toMatchObject({ capId: g.id, resource: 'declassification:object:obj_1', labels: { sensitivity: 'public' } });
    expect(s.audit.find((e) => e.action === 'data_flow.declassify')!.details).toMatchObject({
      from: { sensitivity: 'secret' },
      to: { sensitivity: 'public' },
    });
    await expect(declassify()).rejects.toMatchObject({ code: 'declassification_denied' });
  });

  it('a process high-water is lowered only through declassification:process:<pid>', async () => {
    await s.run((scope) => s.engine.flow(scope, A).taint({ sensitivity: 'restricted' }));
    await o.grant({ subject: 'host_operator', resource: `declassification:process:${A}`, rights: ['admin'] });
    await s.run((scope) => s.engine.declassify(scope, 'host_operator', `process:${A}`, { sensitivity: 'normal' }));
    expect((await s.run((scope) => s.engine.flow(scope, A).labels())).sensitivity).toBe('normal');
  });
});

describe('egress', () => {
  it('[CAP-52] unmatched sink: normal allowed, confidential denied; no use consumed', async () => {
    const g = await o.grant({ subject: A, resource: 'data_release:human:bob:email', rights: ['approve'], usesRemaining: 1 });
    const e1 = await s.run((scope) => s.engine.egress(scope, A, { sink: 'human:bob:email', labels: L({}) }));
    expect(e1).toMatchObject({ decision: 'allow', rule: null, trustLevel: 'untrusted' });
    const e2 = await s.run((scope) =>
      s.engine.egress(scope, A, {
        sink: 'human:bob:email',
        labels: L({ sensitivity: 'confidential' }),
        payloadSha256: canonicalSha256('x'),
      }),
    );
    expect(e2.decision).toBe('deny');
    expect(await o.get(g.id)).toMatchObject({ usesRemaining: 1 });
    expect(s.audit.filter((e) => e.action === 'data_flow.decision').map((e) => e.decision)).toEqual(['allow', 'deny']);
    expect(JSON.stringify(s.audit)).not.toContain('"x"');
  });

  it('[CAP-53] conditional sink: release_required; a bound release allows once; a new payload cannot reuse it', async () => {
    const sink = 'filesystem:workspace:out/report.txt';
    await s.run((scope) => s.engine.flow(scope, A).taint({ sensitivity: 'confidential' }));
    const labels = await s.run((scope) => s.engine.flow(scope, A).labels());
    const payload = canonicalSha256({ report: 1 });
    expect((await s.run((scope) => s.engine.egress(scope, A, { sink, payloadSha256: payload }))).decision).toBe('release_required');
    const { generation } = await s.run((scope) => s.engine.sinkRules(scope));
    const release = await o.grant(
      {
        subject: A,
        resource: `data_release:${sink}`,
        rights: ['approve'],
        usesRemaining: 1,
        constraints: { data_release_binding: s.engine.releaseBinding(A, sink, labels, payload, generation) },
      },
      'human:owner',
    );
    const other = canonicalSha256({ report: 2 });
    expect((await s.run((scope) => s.engine.egress(scope, A, { sink, payloadSha256: other }))).decision).toBe('release_required');
    const ok = await s.run((scope) => s.engine.egress(scope, A, { sink, payloadSha256: payload }));
    expect(ok).toMatchObject({ decision: 'allow', releaseCapId: release.id });
    expect((await s.run((scope) => s.engine.egress(scope, A, { sink, payloadSha256: payload }))).decision).toBe('release_required');
    // Secret data never reaches a conditional sink with max restricted, release or not.
    await s.run((scope) => s.engine.flow(scope, A).taint({ sensitivity: 'secret' }));
    expect((await s.run((scope) => s.engine.egress(scope, A, { sink, payloadSha256: payload }))).decision).toBe('deny');
  });

  it('[CAP-54] an untrusted rule above normal is invalid; an unlisted tenant is denied', async () => {
    const bad: SinkRule = { pattern: 'mcp:*', trustLevel: 'untrusted', maxSensitivity: 'confidential', tenants: [], principals: [] };
    expect(() => validateSinkRules([bad])).toThrowError(
      expect.objectContaining({ code: 'invalid_arguments', message: expect.stringContaining('at most normal') }),
    );
    const rules: SinkRule[] = [
      { pattern: 'mcp:crm:*', trustLevel: 'trusted', maxSensitivity: 'confidential', tenants: ['a'], principals: '*' },
    ];
    await expect(s.run((scope) => s.engine.setSinkRules(scope, A, rules))).rejects.toMatchObject({ code: 'permission_denied' });
    await o.grant({ subject: A, resource: 'data_flow_sink_registry:*', rights: ['admin'] });
    expect(await s.run((scope) => s.engine.setSinkRules(scope, A, rules))).toBe(1);
    expect((await s.run((scope) => s.engine.egress(scope, A, { sink: 'mcp:crm:update', labels: L({ tenant: 'b' }) }))).decision).toBe(
      'deny',
    );
    expect(
      (
        await s.run((scope) =>
          s.engine.egress(scope, A, { sink: 'mcp:crm:update', labels: L({ tenant: 'a', sensitivity: 'confidential' }) }),
        )
      ).decision,
    ).toBe('allow');
  });

  it('longest literal wins; equal-length overlapping wildcards are refused', () => {
    const rules: SinkRule[] = [
      { pattern: 'llm:*', trustLevel: 'trusted', maxSensitivity: 'normal', tenants: '*', principals: '*' },
      { pattern: 'llm:local*', trustLevel: 'trusted', maxSensitivity: 'secret', tenants: '*', principals: '*' },
    ];
    expect(checkEgress(L({ sensitivity: 'secret' }), 'llm:local-qwen', rules).decision).toBe('allow');
    expect(checkEgress(L({ sensitivity: 'secret' }), 'llm:openai', rules).decision).toBe('deny');
    expect(() => validateSinkRules([rules[0]!, { ...rules[0]!, pattern: 'llm:*' }])).toThrow();
  });
});
