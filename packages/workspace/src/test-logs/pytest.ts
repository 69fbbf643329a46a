import { refuse } from '../internal/errors.js';
import { report, type TestReport } from './test-report.js';

const SUMMARY = /^=+ (.*?) in [\d.]+s(?: \([^)]*\))? =+$/;
const VERBOSE = /^(\S+::\S+)\s+(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b/;
const SHORT = /^(FAILED|ERROR) (\S+::\S+|\S+)(?: - .*)?$/;

/**
 * Reads pytest's console output: counts from the final `=== 3 failed, 2 passed, 1 skipped in 0.1s ===` line
 * (errors count as failures, xfail as skipped, xpass as passed), failing names from the `FAILED`/`ERROR` lines of
 * the short summary, or from `-v` result lines when there is no summary.
 *
 * @example
 * parsePytest('FAILED t.py::test_a - assert 0\n=== 1 failed, 1 passed in 0.1s ===').failing; // ['t.py::test_a']
 */
export function parsePytest(log: string): TestReport {
  const lines = log.split(/\r?\n/);
  const failing: string[] = [];
  const verbose = { passed: 0, failed: 0, skipped: 0 };
  const verboseFailing: string[] = [];
  let summary: string | null = null;
  for (const line of lines) {
    const s = SUMMARY.exec(line.trim());
    if (s) summary = s[1]!;
    const short = SHORT.exec(line.trim());
    if (short && !failing.includes(short[2]!)) failing.push(short[2]!);
    const v = VERBOSE.exec(line.trim());
    if (v) {
      const outcome = v[2]!;
      if (outcome === 'PASSED' || outcome === 'XPASS') verbose.passed++;
      else if (outcome === 'SKIPPED' || outcome === 'XFAIL') verbose.skipped++;
      else {
        verbose.failed++;
        verboseFailing.push(v[1]!);
      }
    }
  }
  if (summary !== null) {
    const count = (word: RegExp) => [...summary!.matchAll(new RegExp(`(\\d+) ${word.source}`, 'g'))].reduce((n, m) => n + Number(m[1]), 0);
    const passed = count(/passed/) + count(/xpassed/);
    const failed = count(/failed/) + count(/errors?/);
    const skipped = count(/skipped/) + count(/xfailed/);
    if (passed + failed + skipped > 0 || /no tests ran/.test(summary))
      return report('pytest', { passed, failed, skipped }, failing.length > 0 ? failing : verboseFailing);
  }
  if (verbose.passed + verbose.failed + verbose.skipped === 0)
    throw refuse('invalid_arguments', 'bad_log', 'log: holds no pytest summary line ("=== N passed in Xs ===") nor -v result lines', {
      field: 'log',
    });
  return report('pytest', verbose, verboseFailing);
}
