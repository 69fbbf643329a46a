import { isLibosError, LibosError } from '@libos/sdk';

/** Stable exit codes of the libos command. */
export const EXIT = { ok: 0, toolError: 1, usage: 2 } as const;

/** A usage error: bad flags, arguments or JSON. Exit code 2, nothing written. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface OutputOptions {
  readonly json: boolean;
}

/** Prints a value: JSON when --json, else the text renderer's output. */
export function print(opts: OutputOptions, value: unknown, text: () => string): void {
  process.stdout.write(opts.json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
}

/** Prints one error line (or a JSON error object) to stderr and returns the exit code it deserves. */
export function printError(opts: OutputOptions, err: unknown): number {
  if (err instanceof UsageError) {
    if (opts.json) process.stderr.write(`${JSON.stringify({ schema_version: 1, error: { code: 'usage', message: err.message } })}\n`);
    else process.stderr.write(`libos: ${err.message.split('\n').join(' | ')}\n`);
    return EXIT.usage;
  }
  const e = isLibosError(err) ? (err as LibosError) : LibosError.from(err);
  if (opts.json) process.stderr.write(`${JSON.stringify({ schema_version: 1, error: e.toJSON() })}\n`);
  else process.stderr.write(`libos: ${e.code}: ${e.message.split('\n').join(' | ')}\n`);
  return EXIT.toolError;
}

/** Renders rows as an aligned text table. */
export function table(rows: readonly Record<string, unknown>[], columns: readonly string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((r) =>
    columns.map((c) => (r[c] === null || r[c] === undefined ? '-' : typeof r[c] === 'object' ? JSON.stringify(r[c]) : String(r[c]))),
  );
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (vals: readonly string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n');
}
