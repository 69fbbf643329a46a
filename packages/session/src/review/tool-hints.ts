const BACKTICKED_NAME = /`([a-z][a-z0-9_]{0,63})`/g;

/**
 * Tools the goal explicitly requires that have not succeeded yet: names from the process's callable tool table that
 * the goal quotes in backticks, in goal order, once each, minus `observed` (and never `process_exit`). A plain mention
 * without backticks is not a requirement.
 *
 * @example
 * explicitToolHints('Run `git_diff`, then report.', ['git_diff', 'process_exit'], []); // ['git_diff']
 */
export function explicitToolHints(goalText: string, toolTable: readonly string[], observed: readonly string[]): string[] {
  const callable = new Set(toolTable);
  const seen = new Set(observed);
  const out: string[] = [];
  for (const m of goalText.matchAll(BACKTICKED_NAME)) {
    const name = m[1]!;
    if (name === 'process_exit' || !callable.has(name) || seen.has(name) || out.includes(name)) continue;
    out.push(name);
  }
  return out;
}
