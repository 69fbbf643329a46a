/** Log formats `parse_test_log` reads. */
export const TEST_LOG_FORMATS = ['jest_json', 'vitest_json', 'tap', 'pytest', 'junit_xml'] as const;
export type TestLogFormat = (typeof TEST_LOG_FORMATS)[number];

/** Failing test names kept in a report (the count is always exact). */
export const MAX_FAILING_NAMES = 200;
/** Characters of one test name kept. */
export const MAX_NAME_CHARS = 500;

/** What a test log says: counts and the names of failing tests. */
export interface TestReport {
  readonly format: TestLogFormat;
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly total: number;
  /** Names of failing tests (at most `MAX_FAILING_NAMES`, each cut to `MAX_NAME_CHARS`), in log order. */
  readonly failing: readonly string[];
}

/** Builds a report, bounding the names. */
export function report(
  format: TestLogFormat,
  counts: { passed: number; failed: number; skipped: number; total?: number },
  failing: readonly string[],
): TestReport {
  const names = failing.slice(0, MAX_FAILING_NAMES).map((n) => (n.length > MAX_NAME_CHARS ? `${n.slice(0, MAX_NAME_CHARS - 1)}…` : n));
  return {
    format,
    passed: counts.passed,
    failed: counts.failed,
    skipped: counts.skipped,
    total: counts.total ?? counts.passed + counts.failed + counts.skipped,
    failing: names,
  };
}
