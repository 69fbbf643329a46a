import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, type AuditRecord, type RuntimeEvent } from '../events/event-bus.js';
import { queryAudit, queryEvents } from '../events/queries.js';
import { kernelStores } from '../internal/testing/kernel-store.js';
import { notesPluginWithImage } from '../internal/testing/notes-plugin.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { isAppendFailure } from './append-buffer.js';
import type { AppendLog } from './append-log.js';
import type { KernelStore } from './kernel-database.js';
import type { OpenedStore } from './opened-store.js';
import { inTransaction, type ScopeFactory } from './transaction.js';
import { inUnitOfWork } from './unit-of-work.js';

// Events and audit records are buffered per savepoint or transaction and written together when it ends well
// (`append-buffer.ts`): what each rollback drops, what the bus is told, and what a read inside sees.

const kernelStore = kernelStores();
const rts: Runtime[] = [];
afterEach(async () => {
  for (const rt of rts.splice(0)) await rt.close();
});

const bySeq = <R extends { seq: number }>(rows: readonly R[]) => [...rows].sort((a, b) => a.seq - b.seq);

/** A scope factory on store `s` with no services: the append log `log` (or kysely), and what the bus was told. */
function bareFactory(s: OpenedStore, log: AppendLog | undefined) {
  const bus = new EventBus();
  const told: { events: RuntimeEvent[]; audit: AuditRecord[] } = { events: [], audit: [] };
  bus.on('event', (e) => told.events.push(e));
  bus.on('audit', (a) => told.audit.push(a));
  const f: ScopeFactory = {
    clock: { now: () => new Date('2026-12-01T00:00:00Z') },
    bus,
    service: () => {
      throw new Error('no services here');
    },
    authority: () => {
      throw new Error('no authority here');
    },
    ...(log ? { appendLog: log, exec: s.exec! } : {}),
  };
  return { f, told };
}

/** `log` counting the inserts it is asked for (rows per call), and failing the audit insert while `failAudit` holds. */
function countingLog(log: AppendLog, failAudit: () => boolean = () => false) {
  const calls: string[] = [];
  const counted: AppendLog = {
    events: (rows) => (calls.push(`events:${rows.length}`), log.events(rows)),
    audit: (rows) => {
      calls.push(`audit:${rows.length}`);
      if (failAudit()) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      return log.audit(rows);
    },
  };
  return { calls, log: counted };
}

const storedTypes = async (s: OpenedStore) =>
  (await s.db.selectFrom('events').select(['seq', 'id', 'type']).orderBy('seq').execute()).map((r) => ({ ...r, seq: Number(r.seq) }));
const storedActions = async (s: OpenedStore) =>
  (await s.db.selectFrom('audit_records').select(['seq', 'id', 'action']).orderBy('seq').execute()).map((r) => ({
    ...r,
    seq: Number(r.seq),
  }));

describe('events and audit records, written per savepoint', () => {
  for (const adapter of ['the append log', 'kysely'] as const) {
    it(`[K-9.9] nested savepoints in a unit (${adapter}): a rolled-back one drops only its rows; the bus gets stored seqs`, async () => {
      const s = await kernelStore();
      const { f, told } = bareFactory(s, adapter === 'the append log' ? s.appendLog! : undefined);
      const { events, audit } = told;
      const fail = (db: KernelStore, type: string) =>
        inTransaction(db, f, 'host', null, async (sp) => {
          await sp.events.emit(type);
          await sp.audit.record({ action: type });
          throw new Error(`${type} fails`);
        });
      let seenInside: string[] = [];
      await inUnitOfWork(s.db, async (db) => {
        await inTransaction(db, f, 'host', null, async (outer) => {
          await outer.events.emit('a1');
          await expect(fail(db, 'b1')).rejects.toThrow('b1 fails');
          await inTransaction(db, f, 'host', null, (inner) => inner.events.emit('c1'));
          await outer.events.emit('a2');
          await outer.audit.record({ action: 'a2' });
        });
        await expect(fail(db, 'd1')).rejects.toThrow('d1 fails');
        await inTransaction(db, f, 'host', null, async (sp) => {
          await sp.events.emit('e1');
          await sp.audit.record({ action: 'e1' });
          const own = [...(await queryEvents(sp.store)), ...(await queryAudit(sp.store))];
          seenInside = own.map((r) => ('type' in r ? r.type : `audit:${r.action}`));
        });
      });
      expect(seenInside).toEqual(['a1', 'c1', 'a2', 'e1', 'audit:a2', 'audit:e1']);
      const storedEvents = await s.db.selectFrom('events').select(['seq', 'id', 'type']).orderBy('seq').execute();
      const storedAudit = await s.db.selectFrom('audit_records').select(['seq', 'id', 'action']).orderBy('seq').execute();
      expect(storedEvents.map((r) => r.type)).toEqual(['a1', 'c1', 'a2', 'e1']);
      expect(storedAudit.map((r) => r.action)).toEqual(['a2', 'e1']);
      expect(bySeq(events).map((e) => [e.seq, e.id, e.type])).toEqual(storedEvents.map((r) => [Number(r.seq), r.id, r.type]));
      expect(bySeq(audit).map((a) => [a.seq, a.id, a.action])).toEqual(storedAudit.map((r) => [Number(r.seq), r.id, r.action]));
    });
  }

  it('[K-9.9] calls and host transactions: watchers get every committed row with its seq, a failed one writes none', async () => {
    const rt = await openRuntime({ path: ':memory:', plugins: [notesPluginWithImage()] });
    rts.push(rt);
    const events: RuntimeEvent[] = [];
    const audit: AuditRecord[] = [];
    rt.watch({ event: (e) => events.push(e), audit: (a) => audit.push(a) });
    const p = await rt.spawn({ image: 'notes-agent:v0', goal: 'notes' });
    await rt.activateSkill(p.pid, 'test-notes');
    await rt.grant(p.pid, 'note:*', ['write']);
    expect((await rt.call(p.pid, 'note_write', { key: 'a', text: 't' })).ok).toBe(true);
    expect((await rt.call(p.pid, 'note_write_then_fail', { key: 'b' })).ok).toBe(false);
    const inside = await rt.transaction(async (scope) => {
      await scope.events.emit('probe', { n: 1 });
      await scope.audit.record({ action: 'probe' });
      const store = scope.store as unknown as KernelStore;
      return [(await queryEvents(store, { type: 'probe' })).length, (await queryAudit(store, { action: 'probe' })).length];
    });
    expect(inside).toEqual([1, 1]);
    await expect(
      rt.transaction(async (scope) => {
        await scope.events.emit('doomed');
        throw new Error('host transaction fails');
      }),
    ).rejects.toThrow('host transaction fails');

    const stored = await rt.events({ limit: 10_000 });
    const storedAudit = await rt.audit({ limit: 10_000 });
    expect(stored.filter((e) => e.type === 'note_written').map((e) => e.data.key)).toEqual(['a']);
    expect(stored.filter((e) => e.type === 'doomed')).toEqual([]);
    expect(storedAudit.filter((a) => a.action === 'tool.call').map((a) => a.decision)).toEqual(['ok', 'conflict']);
    expect(bySeq(events).map((e) => [e.seq, e.id])).toEqual(stored.map((e) => [e.seq, e.id]));
    expect(bySeq(audit).map((a) => [a.seq, a.id])).toEqual(storedAudit.map((a) => [a.seq, a.id]));
  });

  it("[K-9.27] the rows of a unit's savepoints wait for its commit: one insert per table, in emission order", async () => {
    const s = await kernelStore();
    const { calls, log } = countingLog(s.appendLog!);
    const { f, told } = bareFactory(s, log);
    await inUnitOfWork(s.db, async (db) => {
      for (const n of [1, 2, 3]) {
        await inTransaction(db, f, 'host', null, async (sp) => {
          await sp.events.emit(`e${n}`);
          await sp.audit.record({ action: `a${n}` });
        });
      }
      expect(calls).toEqual([]); // three savepoints ended, nothing written yet
    });
    expect(calls).toEqual(['events:3', 'audit:3']);
    const events = await storedTypes(s);
    const audit = await storedActions(s);
    expect(events.map((r) => r.type)).toEqual(['e1', 'e2', 'e3']);
    expect(audit.map((r) => r.action)).toEqual(['a1', 'a2', 'a3']);
    expect(bySeq(told.events).map((e) => [e.seq, e.id, e.type])).toEqual(events.map((r) => [r.seq, r.id, r.type]));
    expect(bySeq(told.audit).map((a) => [a.seq, a.id, a.action])).toEqual(audit.map((r) => [r.seq, r.id, r.action]));
  });

  for (const adapter of ['the append log', 'kysely'] as const) {
    it(`[K-9.27] a savepoint that rolls back after a read wrote the rows pending before it keeps them (${adapter})`, async () => {
      const s = await kernelStore();
      const { f, told } = bareFactory(s, adapter === 'the append log' ? s.appendLog! : undefined);
      let readInside: string[] = [];
      await inUnitOfWork(s.db, async (db) => {
        await inTransaction(db, f, 'host', null, async (sp) => {
          await sp.events.emit('kept');
          await sp.audit.record({ action: 'kept' });
        });
        const doomed = inTransaction(db, f, 'host', null, async (sp) => {
          await sp.events.emit('doomed');
          // The read writes what is pending (`kept` too) inside this savepoint; its rollback undoes that write.
          readInside = (await queryEvents(sp.store)).map((e) => e.type);
          await sp.events.emit('doomed later');
          throw new Error('fails after the read');
        });
        await expect(doomed).rejects.toThrow('fails after the read');
        await inTransaction(db, f, 'host', null, (sp) => sp.events.emit('after'));
      });
      expect(readInside).toEqual(['kept', 'doomed']);
      const events = await storedTypes(s);
      const audit = await storedActions(s);
      expect(events.map((r) => r.type)).toEqual(['kept', 'after']);
      expect(audit.map((r) => r.action)).toEqual(['kept']);
      // The bus is told the seq each row was finally stored with, not the one the undone write gave it.
      expect(bySeq(told.events).map((e) => [e.seq, e.id, e.type])).toEqual(events.map((r) => [r.seq, r.id, r.type]));
      expect(bySeq(told.audit).map((a) => [a.seq, a.id, a.action])).toEqual(audit.map((r) => [r.seq, r.id, r.action]));
    });
  }

  it("[K-9.27] an insert that fails at the unit's commit fails the unit whole: no row, undo hooks run, no watcher told", async () => {
    const s = await kernelStore();
    let full = true;
    const { calls, log } = countingLog(s.appendLog!, () => full);
    const { f, told } = bareFactory(s, log);
    const undone: string[] = [];
    const unit = inUnitOfWork(s.db, async (db) => {
      await inTransaction(db, f, 'host', null, async (sp) => {
        await sp.store.insertInto('llm_texts').values({ sha256: 'k', text: 'state of the first savepoint' }).execute();
        sp.onRollback(() => undone.push('first'));
        await sp.events.emit('first');
        await sp.audit.record({ action: 'first' });
      });
      await inTransaction(db, f, 'host', null, async (sp) => {
        sp.onRollback(() => undone.push('second'));
        await sp.audit.record({ action: 'second' });
      });
    });
    const err = await unit.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ message: 'database or disk is full' });
    expect(isAppendFailure(err)).toBe(true);
    expect(calls).toEqual(['events:1', 'audit:2']);
    expect(undone).toEqual(['second', 'first']);
    expect(await s.db.selectFrom('llm_texts').selectAll().execute()).toEqual([]);
    expect(await storedTypes(s)).toEqual([]);
    expect(await storedActions(s)).toEqual([]);
    expect([told.events, told.audit]).toEqual([[], []]);
    // The store is usable after: the next unit commits.
    full = false;
    await inUnitOfWork(s.db, (db) => inTransaction(db, f, 'host', null, (sp) => sp.events.emit('next')));
    expect((await storedTypes(s)).map((r) => r.type)).toEqual(['next']);
  });
});
