import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventBus } from '../../events/event-bus.js';
import { kernelStores } from '../../internal/testing/kernel-store.js';
import { inTransaction, type ScopeFactory } from '../transaction.js';
import { inUnitOfWork } from '../unit-of-work.js';
import { DeferredSavepoints } from './deferred-savepoints.js';

const kernelStore = kernelStores();

/** A DeferredSavepoints that records what it sends. */
function recording() {
  const sent: string[] = [];
  return { sent, sp: new DeferredSavepoints((sql) => void sent.push(sql)) };
}

describe('DeferredSavepoints', () => {
  it('[K-9.14] a savepoint nothing writes in sends nothing: not its SAVEPOINT, RELEASE or ROLLBACK TO', () => {
    const { sent, sp } = recording();
    sp.exec('savepoint libos_sp_0');
    sp.exec('release libos_sp_0');
    sp.exec('savepoint libos_sp_1');
    sp.exec('rollback to libos_sp_1');
    sp.exec('release libos_sp_1');
    expect(sent).toEqual([]);
    expect(sp.deferred).toBe(0);
  });

  it('[K-9.14] a write opens the deferred savepoints first, outermost first; their ends are sent after it', () => {
    const { sent, sp } = recording();
    sp.exec('savepoint libos_sp_0');
    sp.beforeWrite(); // an insert is about to run
    sp.exec('savepoint libos_sp_1');
    sp.beforeWrite(); // another, in the nested one
    sp.exec('savepoint libos_sp_2'); // opened after the write: deferred again
    sp.exec('release libos_sp_2');
    sp.exec('rollback to libos_sp_1');
    sp.exec('release libos_sp_1');
    sp.exec('release libos_sp_0');
    expect(sent).toEqual([
      'savepoint libos_sp_0',
      'savepoint libos_sp_1',
      'rollback to libos_sp_1',
      'release libos_sp_1',
      'release libos_sp_0',
    ]);
  });

  it('[K-9.19] savepoints opened with no write between them share one: the outermost is sent, the others alias it', () => {
    const { sent, sp } = recording();
    sp.exec('savepoint libos_unit'); // a unit of work opens
    sp.exec('savepoint libos_sp_0'); // its call opens, nothing written yet
    sp.beforeWrite();
    expect(sent).toEqual(['savepoint libos_unit']);
    sp.exec('release libos_sp_0'); // its writes already belong to the unit: nothing to send
    sp.exec('release libos_unit');
    expect(sent).toEqual(['savepoint libos_unit', 'release libos_unit']);
  });

  it('[K-9.19] rolling back to a shared savepoint rolls back to the one it shares; a release inside it is sent', () => {
    const { sent, sp } = recording();
    sp.exec('savepoint u');
    sp.exec('savepoint a');
    sp.beforeWrite(); // u sent, a shares it
    sp.exec('savepoint b');
    sp.beforeWrite(); // u was written in: b is sent
    sp.exec('release a'); // ends b with it: b is released, a sends nothing
    expect(sent).toEqual(['savepoint u', 'savepoint b', 'release b']);
    sp.exec('savepoint c');
    sp.beforeWrite(); // u is dirty: c is sent
    sp.exec('rollback to c');
    sp.exec('release c');
    sp.exec('savepoint d');
    sp.exec('savepoint e');
    sp.beforeWrite();
    sp.exec('rollback to e'); // d and e share d
    expect(sent.slice(3)).toEqual(['savepoint c', 'rollback to c', 'release c', 'savepoint d', 'rollback to d']);
  });

  it('[K-9.19] after a rollback to it, a sent savepoint is clean: the next one opened in it shares it', () => {
    const { sent, sp } = recording();
    sp.exec('savepoint u');
    sp.beforeWrite();
    sp.exec('rollback to u'); // u is open and holds nothing now
    sp.exec('savepoint a');
    sp.beforeWrite(); // a begins where u does: it shares u
    sp.exec('rollback to a');
    sp.exec('release a');
    sp.exec('release u');
    expect(sent).toEqual(['savepoint u', 'rollback to u', 'rollback to u', 'release u']);
    expect(sp.deferred).toBe(0);
  });

  it('[K-9.14] ending a sent savepoint ends the deferred ones inside it; reset forgets them', () => {
    const { sent, sp } = recording();
    sp.exec('savepoint a');
    sp.beforeWrite();
    sp.exec('savepoint b');
    sp.exec('release a'); // releases b with it: b is never sent
    sp.beforeWrite();
    expect(sent).toEqual(['savepoint a', 'release a']);
    sp.exec('savepoint c');
    sp.reset(); // the unit ended
    sp.beforeWrite();
    expect(sent).toEqual(['savepoint a', 'release a']);
  });

  it('[K-9.14] a deferred savepoint ended after SQLite lost the transaction is sent, so SQLite reports it', () => {
    const db = new Database(':memory:');
    const sp = new DeferredSavepoints(
      (sql) => void db.prepare(sql).run(),
      () => db.inTransaction,
    );
    db.exec('begin');
    sp.exec('savepoint libos_sp_0');
    db.exec('rollback'); // as SQLite does by itself on an I/O error
    expect(() => sp.exec('rollback to libos_sp_0')).toThrow(/no such savepoint/);
    expect(() => sp.exec('release libos_sp_0')).toThrow(/no such savepoint/);
    db.close();
  });

  /** One step of a unit's inner transactions, as `inSavepoint` issues them. */
  type Op = { kind: 'open' } | { kind: 'write'; v: number } | { kind: 'read' } | { kind: 'end'; ok: boolean } | { kind: 'undo' };

  it('[K-9.14] [K-9.19] any nesting of savepoints, writes and rollbacks leaves the rows eager savepoints leave', () => {
    const op = fc.oneof(
      fc.constant<Op>({ kind: 'open' }),
      fc.integer({ min: 0, max: 99 }).map<Op>((v) => ({ kind: 'write', v })),
      fc.constant<Op>({ kind: 'read' }),
      fc.boolean().map<Op>((ok) => ({ kind: 'end', ok })),
      // ROLLBACK TO the innermost open savepoint, which stays open (writes and savepoints may follow in it)
      fc.constant<Op>({ kind: 'undo' }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const run = (deferred: boolean) => {
          const db = new Database(':memory:');
          db.exec('create table t (v integer not null)');
          const exec = (sql: string) => void db.prepare(sql).run();
          const sp = deferred ? new DeferredSavepoints(exec) : null;
          const control = (sql: string) => (sp ? sp.exec(sql) : exec(sql));
          const open: string[] = [];
          let next = 0;
          db.exec('begin');
          for (const o of ops) {
            if (o.kind === 'open') {
              const name = `libos_sp_${next++}`;
              open.push(name);
              control(`savepoint ${name}`);
            } else if (o.kind === 'write') {
              sp?.beforeWrite();
              db.prepare('insert into t (v) values (?)').run(o.v);
            } else if (o.kind === 'read') {
              db.prepare('select count(*) from t').get();
            } else if (o.kind === 'undo') {
              if (open.length > 0) control(`rollback to ${open.at(-1)!}`);
            } else if (open.length > 0) {
              const name = open.pop()!;
              if (!o.ok) control(`rollback to ${name}`);
              control(`release ${name}`);
            }
          }
          while (open.length > 0) control(`release ${open.pop()!}`);
          db.exec('commit');
          const rows = db.prepare('select v from t order by rowid').all();
          db.close();
          return rows;
        };
        expect(run(true)).toEqual(run(false));
      }),
      { numRuns: 1_000 },
    );
  });

  it('[K-9.14] in a store: a read-only transaction that fails keeps the memo; one that wrote rolls back its rows', async () => {
    const s = await kernelStore();
    const f: ScopeFactory = {
      clock: { now: () => new Date('2026-12-01T00:00:00Z') },
      bus: new EventBus(),
      service: () => {
        throw new Error('no services here');
      },
      authority: () => {
        throw new Error('no authority here');
      },
      appendLog: s.appendLog!,
      exec: s.exec!,
    };
    let loads = 0;
    const hot = () => s.memo.read('hot-row', ['processes'], async () => ++loads);
    await inUnitOfWork(s.db, async (db) => {
      await hot();
      // Reads only, then fails (a refused charge does): before K-9.14 its ROLLBACK TO emptied the memo.
      const readOnly = inTransaction(db, f, 'host', null, async (scope) => {
        await scope.store.selectFrom('processes').select('pid').execute();
        throw new Error('refused');
      });
      await expect(readOnly).rejects.toThrow('refused');
      await hot();
      // Writes, then fails: its rows are gone, the memo of the table it wrote is not trusted.
      const wrote = inTransaction(db, f, 'host', null, async (scope) => {
        await scope.events.emit('kept?');
        await scope.store.insertInto('llm_texts').values({ sha256: 'k', text: 'x' }).execute();
        throw new Error('fails after writing');
      });
      await expect(wrote).rejects.toThrow('fails after writing');
      await inTransaction(db, f, 'host', null, (scope) => scope.events.emit('kept'));
    });
    expect(loads).toBe(1);
    expect(await s.db.selectFrom('llm_texts').selectAll().execute()).toEqual([]);
    expect((await s.db.selectFrom('events').select('type').execute()).map((r) => r.type)).toEqual(['kept']);
  });
});
