import { refuse } from '../internal/errors.js';
import { report, type TestReport } from './test-report.js';

const POINT = /^(\s*)(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?(.*)$/;
const SUBTEST = /^(\s*)# Subtest: (.*)$/;
const DIRECTIVE = /(?:^|\s)#\s*(SKIP|TODO)\b.*$/i;

/**
 * Reads TAP (13 and 14, with indented subtests such as `node --test --test-reporter=tap` writes). Only leaf test
 * points count: a point preceded by deeper points summarises its subtests. `# SKIP` and `# TODO` points are skipped
 * (a failing TODO is not a failure). Names of nested tests are joined with ` > `. YAML diagnostic blocks are ignored.
 *
 * @example
 * parseTap('TAP version 13\nok 1 - a\nnot ok 2 - b\n1..2\n').failing; // ['b']
 */
export function parseTap(log: string): TestReport {
  const lines = log.split(/\r?\n/);
  const names = new Map<number, string>();
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let points = 0;
  let lastIndent = -1;
  let yamlIndent: number | null = null;
  const failing: string[] = [];
  for (const line of lines) {
    const indent = line.length - line.trimStart().length;
    if (yamlIndent !== null) {
      if (line.trim() === '...' && indent === yamlIndent) yamlIndent = null;
      continue;
    }
    if (line.trim() === '---' && lastIndent >= 0) {
      yamlIndent = indent;
      continue;
    }
    const sub = SUBTEST.exec(line);
    if (sub) {
      names.set(sub[1]!.length, sub[2]!.trim());
      for (const k of [...names.keys()]) if (k > sub[1]!.length) names.delete(k);
      continue;
    }
    const m = POINT.exec(line);
    if (!m) continue;
    points++;
    const depth = m[1]!.length;
    const isParent = lastIndent > depth;
    lastIndent = depth;
    if (isParent) continue;
    const desc = m[4]!.replace(DIRECTIVE, '').trim();
    const directive = DIRECTIVE.exec(m[4]!)?.[1]?.toUpperCase();
    if (directive) {
      skipped++;
      continue;
    }
    if (m[2] === 'ok') {
      passed++;
      continue;
    }
    failed++;
    const ancestors = [...names.entries()]
      .filter(([k]) => k < depth)
      .sort((a, b) => a[0] - b[0])
      .map(([, n]) => n);
    failing.push([...ancestors, desc || `test ${m[3] ?? points}`].join(' > '));
  }
  if (points === 0) throw refuse('invalid_arguments', 'bad_log', 'log: holds no TAP test point ("ok" / "not ok" lines)', { field: 'log' });
  return report('tap', { passed, failed, skipped }, failing);
}
