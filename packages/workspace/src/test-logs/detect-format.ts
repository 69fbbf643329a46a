import { refuse } from '../internal/errors.js';
import type { TestLogFormat } from './test-report.js';

/**
 * Guesses a log's format: JSON with `testResults` (Vitest when it mentions vitest paths or `meta`, else Jest), XML with
 * a `<testsuite`, TAP test points, or pytest's session lines. Anything else is `invalid_arguments`: pass `format`.
 *
 * @example
 * detectFormat('TAP version 13\nok 1 - a'); // 'tap'
 */
export function detectFormat(log: string): TestLogFormat {
  const text = log.trimStart();
  if (/^\{/m.test(text) && text.includes('"testResults"')) return /"meta"\s*:|vitest/.test(text) ? 'vitest_json' : 'jest_json';
  if (/<testsuites?[\s>]/.test(text)) return 'junit_xml';
  if (/^TAP version \d+/m.test(text) || /^\s*(not )?ok \d+\b/m.test(text)) return 'tap';
  if (/^=+ (test session starts|.* in [\d.]+s.*) =+$/m.test(text) || /^\S+::\S+ (PASSED|FAILED)/m.test(text)) return 'pytest';
  throw refuse(
    'invalid_arguments',
    'unrecognised_format',
    'log: the format is not recognised; pass format (jest_json, vitest_json, tap, pytest or junit_xml)',
    { field: 'format' },
  );
}
