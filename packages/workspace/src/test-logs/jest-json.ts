import { refuse } from '../internal/errors.js';
import { report, type TestReport } from './test-report.js';

interface AssertionResult {
  readonly status?: string;
  readonly fullName?: string;
  readonly title?: string;
  readonly ancestorTitles?: readonly string[];
}
interface FileResult {
  readonly name?: string;
  readonly status?: string;
  readonly message?: string;
  readonly assertionResults?: readonly AssertionResult[];
}
interface JestJson {
  readonly numPassedTests?: number;
  readonly numFailedTests?: number;
  readonly numPendingTests?: number;
  readonly numTodoTests?: number;
  readonly numTotalTests?: number;
  readonly testResults?: readonly FileResult[];
}

/** The JSON object a log holds: the whole text, or the span from its first `{` line to its last `}` (a runner's banner around it). */
export function extractJson(log: string): unknown {
  const text = log.trim();
  try {
    return JSON.parse(text);
  } catch (first) {
    const start = text.search(/^\{/m);
    const end = text.lastIndexOf('}');
    if (start < 0 || end <= start) throw refuse('invalid_arguments', 'bad_log', 'log: holds no JSON object', { field: 'log' }, first);
    try {
      return JSON.parse(text.slice(start, end + 1));
    } catch (err) {
      throw refuse('invalid_arguments', 'bad_log', `log: the JSON report does not parse: ${(err as Error).message}`, { field: 'log' }, err);
    }
  }
}

const nameOf = (file: FileResult, a: AssertionResult) => {
  const parts = [...(a.ancestorTitles ?? []), a.title ?? a.fullName ?? '(unnamed)'];
  return `${file.name ? `${file.name} > ` : ''}${parts.join(' > ')}`;
};

/**
 * Reads a Jest `--json` or Vitest `--reporter=json` report (the same shape): counts from `num*Tests`, failing names
 * from `assertionResults` (`file > describe > test`). A file that failed without a failed test (a syntax error, a
 * failed import) counts as one failure named by the file.
 *
 * @example
 * import * as fs from 'node:fs';
 * parseJestJson(fs.readFileSync('report.json', 'utf8'), 'vitest_json').failed;
 */
export function parseJestJson(log: string, format: 'jest_json' | 'vitest_json'): TestReport {
  const json = extractJson(log) as JestJson;
  if (json === null || typeof json !== 'object' || !Array.isArray(json.testResults)) {
    throw refuse('invalid_arguments', 'bad_log', 'log: not a Jest/Vitest JSON report (no testResults array)', { field: 'log' });
  }
  const failing: string[] = [];
  let fileFailures = 0;
  for (const file of json.testResults) {
    const failed = (file.assertionResults ?? []).filter((a: AssertionResult) => a.status === 'failed');
    for (const a of failed) failing.push(nameOf(file, a));
    if (failed.length === 0 && file.status === 'failed') {
      fileFailures++;
      failing.push(`${file.name ?? '(unnamed file)'} (the file failed to run${file.message ? `: ${file.message.split('\n')[0]}` : ''})`);
    }
  }
  const passed = json.numPassedTests ?? 0;
  const failed = (json.numFailedTests ?? 0) + fileFailures;
  const skipped = (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0);
  return report(format, { passed, failed, skipped, total: (json.numTotalTests ?? passed + failed + skipped) + fileFailures }, failing);
}
