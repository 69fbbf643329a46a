import type { Kysely } from 'kysely';

/** Rows of `table` whose `column` is one of `values` (in chunks, so any number of values fits a statement). */
export async function rowsWhereIn(
  db: Kysely<any>,
  table: string,
  column: string,
  values: readonly string[],
  columns?: readonly string[],
): Promise<Record<string, any>[]> {
  const out: Record<string, any>[] = [];
  for (let i = 0; i < values.length; i += 500) {
    const chunk = values.slice(i, i + 500);
    const sel = db.selectFrom(table);
    const rows = columns
      ? await sel
          .select(columns as string[])
          .where(column, 'in', chunk)
          .execute()
      : await sel.selectAll().where(column, 'in', chunk).execute();
    out.push(...(rows as Record<string, any>[]));
  }
  return out;
}
