import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detectFormat } from './detect-format.js';
import { parseTestLogText } from './parse-log.js';
import { MAX_FAILING_NAMES } from './test-report.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

describe('parseTestLogText on real runner output', () => {
  it('node --test --test-reporter=tap: leaf tests only, nested names joined, SKIP counted as skipped', () => {
    expect(parseTestLogText(fixture('node-test.tap'), 'auto')).toEqual({
      format: 'tap',
      passed: 2,
      failed: 2,
      skipped: 1,
      total: 5,
      failing: ['subtracts', 'group > inner bad'],
    });
  });

  it('vitest --reporter=json: counts and file > describe > test names', () => {
    expect(parseTestLogText(fixture('vitest.json'), 'auto')).toEqual({
      format: 'vitest_json',
      passed: 2,
      failed: 1,
      skipped: 1,
      total: 4,
      failing: ['/repo/m.test.ts > math > fails'],
    });
  });

  it('pytest console output: the summary line and the short summary names', () => {
    expect(parseTestLogText(fixture('pytest.txt'), 'auto')).toEqual({
      format: 'pytest',
      passed: 2,
      failed: 3,
      skipped: 1,
      total: 6,
      failing: ['test_x.py::test_bad', 'test_x.py::TestK::test_m', 'test_x.py::test_p[2]'],
    });
  });

  it('JUnit XML from pytest and from vitest', () => {
    expect(parseTestLogText(fixture('pytest-junit.xml'), 'auto')).toEqual({
      format: 'junit_xml',
      passed: 2,
      failed: 3,
      skipped: 1,
      total: 6,
      failing: ['test_x > test_bad', 'test_x.TestK > test_m', 'test_x > test_p[2]'],
    });
    expect(parseTestLogText(fixture('vitest-junit.xml'), 'junit_xml')).toMatchObject({
      passed: 2,
      failed: 1,
      skipped: 1,
      failing: ['m.test.ts > math > fails'],
    });
  });
});

describe('shapes runners also produce', () => {
  it('a Jest report with a file that failed to run counts it as a failure', () => {
    const jest = {
      numPassedTests: 1,
      numFailedTests: 0,
      numPendingTests: 0,
      numTotalTests: 1,
      testResults: [
        { name: '/r/a.test.js', status: 'passed', assertionResults: [{ status: 'passed', title: 'a', ancestorTitles: [] }] },
        { name: '/r/b.test.js', status: 'failed', message: 'SyntaxError: Unexpected token\n  at x', assertionResults: [] },
      ],
    };
    expect(parseTestLogText(`> jest --json\n${JSON.stringify(jest)}\n`, 'auto')).toEqual({
      format: 'jest_json',
      passed: 1,
      failed: 1,
      skipped: 0,
      total: 2,
      failing: ['/r/b.test.js (the file failed to run: SyntaxError: Unexpected token)'],
    });
  });

  it('plain TAP with TODO directives, no plan, errors as names', () => {
    const tap = 'ok 1 - first\nnot ok 2 - second # TODO later\nnot ok 3\nok 4 # SKIP no db\n';
    expect(parseTestLogText(tap, 'tap')).toEqual({ format: 'tap', passed: 1, failed: 1, skipped: 2, total: 4, failing: ['test 3'] });
  });

  it('pytest -v without a summary line falls back to the result lines; errors count as failures', () => {
    const log = 'a.py::t1 PASSED\na.py::t2 ERROR\na.py::t3 XFAIL\n';
    expect(parseTestLogText(log, 'pytest')).toEqual({
      format: 'pytest',
      passed: 1,
      failed: 1,
      skipped: 1,
      total: 3,
      failing: ['a.py::t2'],
    });
    expect(parseTestLogText('==== 1 failed, 2 errors, 1 xpassed, 3 xfailed, 4 passed in 1.00s ====', 'pytest')).toMatchObject({
      passed: 5,
      failed: 3,
      skipped: 3,
    });
  });

  it('keeps at most MAX_FAILING_NAMES names but the exact count', () => {
    const tap = Array.from({ length: 250 }, (_, i) => `not ok ${i + 1} - t${i}`).join('\n');
    const r = parseTestLogText(tap, 'tap');
    expect(r.failed).toBe(250);
    expect(r.failing).toHaveLength(MAX_FAILING_NAMES);
  });
});

describe('bad logs are invalid_arguments naming the problem', () => {
  it.each([
    ['unrecognised text', 'hello world', 'auto', 'unrecognised_format'],
    ['JSON without testResults', '{"a":1}', 'jest_json', 'bad_log'],
    ['broken XML', '<testsuite><testcase></testsuite>', 'junit_xml', 'bad_log'],
    ['TAP without test points', 'TAP version 13\n1..0\n', 'tap', 'bad_log'],
    ['pytest without results', 'collected 0 items', 'pytest', 'bad_log'],
  ] as const)('%s', (_name, log, format, reason) => {
    expect(() => parseTestLogText(log, format)).toThrow(
      expect.objectContaining({ code: 'invalid_arguments', details: expect.objectContaining({ reason }) }),
    );
  });

  it('detectFormat names the formats it knows', () => {
    expect(detectFormat('============================= test session starts ==============================')).toBe('pytest');
    expect(detectFormat('<?xml version="1.0"?><testsuites></testsuites>')).toBe('junit_xml');
  });
});
