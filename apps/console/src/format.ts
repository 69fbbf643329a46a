/** `2024-05-01T12:34:56.789Z` as `12:34:56`. */
export function clock(iso: string | null | undefined): string {
  if (!iso) return '';
  const m = /T(\d\d:\d\d:\d\d)/.exec(iso);
  return m ? m[1]! : iso;
}

/** Compact JSON for a table cell, cut at `max` characters. */
export function brief(value: unknown, max = 160): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text === undefined) return '';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Indented JSON for a details block. */
export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? '';
}

/** The message of anything thrown (a LibosApiError names its code). */
export function errorText(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err && 'message' in err) return `${String(err.code)}: ${String(err.message)}`;
  return err instanceof Error ? err.message : String(err);
}
