import { CompiledQuery } from 'kysely';
import type { AuditRow, EventRow } from '../append-log.js';

const EVENT_COLUMNS = ['id', 'ts', 'pid', 'type', 'data'] as const;
const AUDIT_COLUMNS = ['id', 'ts', 'actor', 'action', 'target', 'decision', 'call_id', 'details'] as const;

/** Statement texts by row counts (`<events>,<audit>`): a call writes the same few shapes over and over. */
const texts = new Map<string, string>();
const TEXTS_KEPT = 256;

function valuesList(columns: number, rows: number, first: number): string {
  const tuples: string[] = [];
  for (let r = 0, p = first; r < rows; r++) {
    const slots: string[] = [];
    for (let c = 0; c < columns; c++) slots.push(`$${p++}`);
    tuples.push(`(${slots.join(', ')})`);
  }
  return tuples.join(', ');
}

function insert(table: string, columns: readonly string[], rows: number, first: number): string {
  const names = columns.map((c) => `"${c}"`).join(', ');
  return `insert into "${table}" (${names}) values ${valuesList(columns.length, rows, first)} returning "id", "seq"`;
}

function textOf(events: number, audit: number): string {
  const key = `${events},${audit}`;
  let text = texts.get(key);
  if (text !== undefined) return text;
  const parts: string[] = [];
  const selects: string[] = [];
  if (events > 0) {
    parts.push(`e as (${insert('events', EVENT_COLUMNS, events, 1)})`);
    selects.push('select "id", "seq" from e');
  }
  if (audit > 0) {
    parts.push(`a as (${insert('audit_records', AUDIT_COLUMNS, audit, 1 + events * EVENT_COLUMNS.length)})`);
    selects.push('select "id", "seq" from a');
  }
  text = `with ${parts.join(', ')} ${selects.join(' union all ')}`;
  if (texts.size >= TEXTS_KEPT) texts.delete(texts.keys().next().value!);
  texts.set(key, text);
  return text;
}

/**
 * One statement that writes a transaction's pending `events` and `audit_records` rows (K-15.21): both multi-row
 * inserts as data-modifying CTEs, answering every written row's `id` and `seq`, so the two tables cost one round trip
 * to the server instead of one each. Its text depends only on the row counts, so it is built once per shape.
 *
 * @example
 * declare const events: EventRow[];
 * declare const audit: AuditRow[];
 * const q = appendStatement(events, audit); // with e as (insert into "events" ...), a as (...) select ... union all ...
 */
export function appendStatement(events: readonly EventRow[], audit: readonly AuditRow[]): CompiledQuery<{ id: string; seq: string }> {
  const parameters: unknown[] = [];
  for (const r of events) parameters.push(r.id, r.ts, r.pid, r.type, r.data);
  for (const r of audit) parameters.push(r.id, r.ts, r.actor, r.action, r.target, r.decision, r.call_id, r.details);
  return CompiledQuery.raw(textOf(events.length, audit.length), parameters) as CompiledQuery<{ id: string; seq: string }>;
}
