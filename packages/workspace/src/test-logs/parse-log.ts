import { detectFormat } from './detect-format.js';
import { parseJestJson } from './jest-json.js';
import { parseJunitXml } from './junit-xml.js';
import { parsePytest } from './pytest.js';
import { parseTap } from './tap.js';
import type { TestLogFormat, TestReport } from './test-report.js';

/**
 * Parses a test log in `format` (or the detected one for `auto`).
 *
 * @example
 * parseTestLogText('TAP version 13\nok 1 - a\n1..1\n', 'auto'); // { format: 'tap', passed: 1, failed: 0, ... }
 */
export function parseTestLogText(log: string, format: TestLogFormat | 'auto'): TestReport {
  const f = format === 'auto' ? detectFormat(log) : format;
  switch (f) {
    case 'jest_json':
    case 'vitest_json':
      return parseJestJson(log, f);
    case 'tap':
      return parseTap(log);
    case 'pytest':
      return parsePytest(log);
    case 'junit_xml':
      return parseJunitXml(log);
  }
}
