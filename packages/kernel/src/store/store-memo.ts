import { foundRows, type StoreMemo } from '@libos/sdk';
import type { StatementEffect } from './statement-effect.js';

/** Entries kept at most; the oldest go first (a runtime with more hot rows than this reads some twice). */
export const MEMO_CAPACITY = 20_000;

/** Entries dropped at once when the memo is full: the oldest sixteenth. */
export const MEMO_EVICTED_AT_ONCE = MEMO_CAPACITY / 16;

interface Entry {
  readonly value: unknown;
  readonly epoch: number;
  readonly tables: readonly string[];
  readonly gens: readonly number[];
}

/**
 * The kernel's `StoreMemo`: a generation per table, bumped by the store adapter for each statement that writes the
 * table (`wrote`), and an epoch bumped by anything it cannot attribute to one table (a rollback, DDL: `wroteAll`).
 * An entry is valid while its epoch and its tables' generations are those it was read under. A read snapshots the
 * generations before it loads, so a write during the load leaves the entry stale rather than wrong.
 *
 * @example
 * const load = async () => ({ pid: 'p1', status: 'runnable' });
 * const memo = new TableMemo();
 * await memo.read('process:p1', ['processes'], load); // loads
 * await memo.read('process:p1', ['processes'], load); // cached
 * memo.wrote('processes');                            // next read loads again
 */
export class TableMemo implements StoreMemo {
  #epoch = 0;
  readonly #gens = new Map<string, number>();
  readonly #entries = new Map<string, Entry>();

  async read<T>(key: string, tables: readonly string[], load: () => Promise<T>): Promise<T> {
    const hit = this.#entries.get(key);
    if (hit && this.#valid(hit, tables)) return hit.value as T;
    const epoch = this.#epoch;
    const gens = tables.map((t) => this.#gens.get(t) ?? 0);
    const value = await load();
    this.#put(key, { value, epoch, tables, gens });
    return value;
  }

  peek<T>(key: string, tables: readonly string[]): T | undefined {
    const hit = this.#entries.get(key);
    return hit && this.#valid(hit, tables) ? (hit.value as T) : undefined;
  }

  write<T>(key: string, tables: readonly string[], value: T): void {
    this.#put(key, { value, epoch: this.#epoch, tables, gens: tables.map((t) => this.#gens.get(t) ?? 0) });
  }

  /**
   * A statement wrote `table`: every entry read from it is stale; unless the statement only inserted rows
   * (`onlyInserts`), so are those that depend on rows found in it by key (`foundRows`).
   */
  wrote(table: string, onlyInserts = false): void {
    this.#gens.set(table, (this.#gens.get(table) ?? 0) + 1);
    if (!onlyInserts) {
      const found = foundRows(table);
      this.#gens.set(found, (this.#gens.get(found) ?? 0) + 1);
    }
  }

  /**
   * A statement with `effect` ran: what it wrote is stale (`wrote` per table it writes, `wroteAll` when it names none).
   * Both store adapters call this for every statement they run.
   */
  ran(effect: StatementEffect): void {
    if (effect.kind === 'table') this.wrote(effect.table, effect.onlyInserts);
    else if (effect.kind === 'tables') for (const t of effect.tables) this.wrote(t, effect.onlyInserts);
    else if (effect.kind === 'all') this.wroteAll();
  }

  /** Writes that name no one table (ROLLBACK, ROLLBACK TO, DDL, a restore): every entry is stale. */
  wroteAll(): void {
    this.#epoch++;
    this.#entries.clear();
  }

  #valid(e: Entry, tables: readonly string[]): boolean {
    if (e.epoch !== this.#epoch || e.tables.length !== tables.length) return false;
    for (let i = 0; i < tables.length; i++) {
      if (e.tables[i] !== tables[i] || (this.#gens.get(tables[i]!) ?? 0) !== e.gens[i]) return false;
    }
    return true;
  }

  #put(key: string, e: Entry): void {
    this.#entries.delete(key);
    if (this.#entries.size >= MEMO_CAPACITY) this.#evictOldest();
    this.#entries.set(key, e);
  }

  /**
   * Drops the oldest `MEMO_EVICTED_AT_ONCE` entries in one pass. Dropping one per put cost ~18 µs a put once full: a
   * Map's iterator steps over every slot deleted since the table was last rebuilt to reach the oldest live entry.
   */
  #evictOldest(): void {
    let n = MEMO_EVICTED_AT_ONCE;
    for (const k of this.#entries.keys()) {
      if (n-- === 0) break;
      this.#entries.delete(k);
    }
  }
}
