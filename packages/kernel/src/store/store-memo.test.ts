import { foundRows } from '@libos/sdk';
import { describe, expect, it } from 'vitest';
import { statementEffect } from './statement-effect.js';
import { MEMO_CAPACITY, MEMO_EVICTED_AT_ONCE, TableMemo } from './store-memo.js';

const counter = () => {
  let n = 0;
  return {
    load: async () => ++n,
    get count() {
      return n;
    },
  };
};

describe('TableMemo', () => {
  it('[K-9.3] a read is loaded once, until a write to one of its tables', async () => {
    const memo = new TableMemo();
    const c = counter();
    expect(await memo.read('k', ['processes'], c.load)).toBe(1);
    expect(await memo.read('k', ['processes'], c.load)).toBe(1);
    memo.wrote('events');
    expect(await memo.read('k', ['processes'], c.load)).toBe(1);
    memo.wrote('processes');
    expect(await memo.read('k', ['processes'], c.load)).toBe(2);
    expect(c.count).toBe(2);
  });

  it('[K-9.30] peek answers a valid entry and loads nothing; a stale, foreign or missing one is undefined', async () => {
    const memo = new TableMemo();
    const c = counter();
    expect(memo.peek('k', ['cap_grants'])).toBeUndefined();
    await memo.read('k', ['cap_grants'], c.load);
    expect(memo.peek('k', ['cap_grants'])).toBe(1);
    expect(memo.peek('k', ['processes'])).toBeUndefined(); // read under other tables
    memo.wrote('cap_grants', true);
    expect(memo.peek('k', ['cap_grants'])).toBeUndefined();
    memo.write('k', ['cap_grants'], 7);
    expect(memo.peek('k', ['cap_grants'])).toBe(7);
    memo.wroteAll();
    expect(memo.peek('k', ['cap_grants'])).toBeUndefined();
    expect(c.count).toBe(1);
  });

  it('[K-9.3] a rollback or DDL (wroteAll) drops every entry', async () => {
    const memo = new TableMemo();
    const a = counter();
    const b = counter();
    await memo.read('a', ['processes'], a.load);
    await memo.read('b', ['cap_grants', 'processes'], b.load);
    memo.wroteAll();
    expect(await memo.read('a', ['processes'], a.load)).toBe(2);
    expect(await memo.read('b', ['cap_grants', 'processes'], b.load)).toBe(2);
  });

  it('[K-9.3] a write during a load leaves the entry stale, not wrong', async () => {
    const memo = new TableMemo();
    let n = 0;
    const racing = async () => {
      n++;
      memo.wrote('processes');
      return n;
    };
    expect(await memo.read('k', ['processes'], racing)).toBe(1);
    expect(await memo.read('k', ['processes'], async () => ++n)).toBe(2);
  });

  it('[K-9.3] a full memo drops its oldest entries first, a sixteenth at a time; the rest stay cached', async () => {
    const memo = new TableMemo();
    for (let i = 0; i < MEMO_CAPACITY; i++) memo.write(`k${i}`, ['processes'], i);
    memo.write('newest', ['processes'], 'n');
    const c = counter();
    for (const i of [0, MEMO_EVICTED_AT_ONCE - 1]) expect(await memo.read(`k${i}`, ['processes'], c.load)).not.toBe(i);
    expect(c.count).toBe(2);
    for (const i of [MEMO_EVICTED_AT_ONCE, MEMO_CAPACITY - 1]) expect(await memo.read(`k${i}`, ['processes'], c.load)).toBe(i);
    expect(await memo.read('newest', ['processes'], c.load)).toBe('n');
    expect(c.count).toBe(2);
  });

  it('[K-9.16] an entry on foundRows(t) survives an insert into t; an update, a delete or a rollback drops it', async () => {
    const memo = new TableMemo();
    const found = counter();
    const scan = counter();
    const read = () => memo.read('owner:o1', [foundRows('om_objects')], found.load);
    const list = () => memo.read('all', ['om_objects'], scan.load);
    await read();
    await list();
    memo.wrote('om_objects', true);
    expect(await read()).toBe(1);
    expect(await list()).toBe(2); // a scan may see the new row
    memo.wrote('om_objects');
    expect(await read()).toBe(2);
    memo.wroteAll();
    expect(await read()).toBe(3);
    memo.wrote('om_namespaces');
    expect(await read()).toBe(3);
  });

  it('[K-9.16] ran(effect) of a statement: a read or an insert keeps a found row, an update drops it, a rollback all', async () => {
    const memo = new TableMemo();
    const found = counter();
    const read = () => memo.read('owner:o1', [foundRows('om_objects')], found.load);
    await read();
    memo.ran(statementEffect('select * from "om_objects" where "oid" = ?'));
    memo.ran(statementEffect('insert into "om_objects" ("oid") values (?)'));
    memo.ran(statementEffect('with x as (select 1) insert into "om_objects" ("oid") select ?'));
    expect(await read()).toBe(1);
    memo.ran(statementEffect('update "om_objects" set "version" = ? where "oid" = ?'));
    expect(await read()).toBe(2);
    memo.ran(statementEffect('rollback to savepoint "sp"'));
    expect(await read()).toBe(3);
  });

  it('[K-9.3] write-through caches the value the writer left; other keys on the table stay invalid', async () => {
    const memo = new TableMemo();
    const other = counter();
    await memo.read('budget:a', ['cap_budget_accounts'], async () => 'before');
    await memo.read('budget:b', ['cap_budget_accounts'], other.load);
    memo.wrote('cap_budget_accounts');
    memo.write('budget:a', ['cap_budget_accounts'], 'after');
    expect(await memo.read('budget:a', ['cap_budget_accounts'], async () => 'reloaded')).toBe('after');
    expect(await memo.read('budget:b', ['cap_budget_accounts'], other.load)).toBe(2);
  });
});

describe('statementEffect', () => {
  it.each([
    ['select * from "processes" where "pid" = ?', { kind: 'none' }],
    ['begin', { kind: 'none' }],
    ['commit', { kind: 'none' }],
    ['savepoint libos_sp_0', { kind: 'none' }],
    ['release libos_sp_0', { kind: 'none' }],
    ['with "x" as (select 1) select * from "x"', { kind: 'none' }],
    ['insert into "events" ("id") values (?)', { kind: 'table', table: 'events', onlyInserts: true }],
    ['insert or ignore into "llm_texts" ("sha256") values (?)', { kind: 'table', table: 'llm_texts', onlyInserts: true }],
    ['update "processes" set "status" = ?', { kind: 'table', table: 'processes', onlyInserts: false }],
    ['delete from "pending_actions" where "pid" = ?', { kind: 'table', table: 'pending_actions', onlyInserts: false }],
    ['replace into cap_meta (key, value) values (?, ?)', { kind: 'table', table: 'cap_meta', onlyInserts: false }],
    ['insert or replace into "cap_meta" ("key") values (?)', { kind: 'table', table: 'cap_meta', onlyInserts: false }],
    [
      'insert into "cap_budget_accounts" ("pid") values ($1) on conflict ("pid") do update set "spent" = $2',
      { kind: 'table', table: 'cap_budget_accounts', onlyInserts: false },
    ],
    ['rollback', { kind: 'all' }],
    ['rollback to libos_sp_3', { kind: 'all' }],
    ['create table "t" ("a" text)', { kind: 'all' }],
    ['with "x" as (select 1) delete from "processes"', { kind: 'all' }],
    ['pragma wal_checkpoint(TRUNCATE)', { kind: 'all' }],
    ['select "gen" from "processes" where "pid" = $1 for update', { kind: 'none' }],
    ['set search_path to libos', { kind: 'none' }],
    ['insert into "events" ("id") values ($1) returning "seq"', { kind: 'table', table: 'events', onlyInserts: true }],
    ['insert into "llm_texts" ("sha256") values ($1) on conflict do nothing', { kind: 'table', table: 'llm_texts', onlyInserts: true }],
    ['alter table "events" drop constraint "events_id_key"', { kind: 'all' }],
    [
      'with e as (insert into "events" ("id") values ($1) returning "id"), a as (insert into "audit_records" ("id") values ($2) ' +
        'returning "id") select "id" from e union all select "id" from a',
      { kind: 'tables', tables: ['events', 'audit_records'], onlyInserts: true },
    ],
    ['with e as (insert into "events" ("id") values ($1) returning "id") update "processes" set "gen" = 1', { kind: 'all' }],
    ['with e as (insert into "events" ("id") values ($1) on conflict do update set "id" = $1) select 1', { kind: 'all' }],
  ])('[K-9.3] %s', (sql, effect) => {
    expect(statementEffect(sql)).toEqual(effect);
  });
});
