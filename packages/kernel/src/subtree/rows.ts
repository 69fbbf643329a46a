/**
 * `read` over `values` in chunks of 500 (so any number of values fits a statement's `in (...)`), rows concatenated.
 *
 * @example
 * const rows = await inChunks(['pid_1', 'pid_2'], async (chunk) => chunk.map((pid) => ({ pid })));
 */
export async function inChunks<R>(values: readonly string[], read: (chunk: string[]) => Promise<readonly R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < values.length; i += 500) out.push(...(await read(values.slice(i, i + 500))));
  return out;
}
