import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { refuse } from '../internal/errors.js';
import { report, type TestReport } from './test-report.js';

type Node = Record<string, unknown>;

const asArray = (v: unknown): Node[] => (v === undefined || v === null ? [] : Array.isArray(v) ? (v as Node[]) : [v as Node]);

/** Every `<testcase>` under `node`, however deeply `<testsuite>`s nest. */
function testcases(node: Node, out: Node[]): Node[] {
  for (const c of asArray(node.testcase)) out.push(c);
  for (const s of asArray(node.testsuite)) testcases(s, out);
  return out;
}

/**
 * Reads JUnit XML (pytest `--junitxml`, Vitest/Jest junit reporters, Maven Surefire): each `<testcase>` is passed,
 * failed (`<failure>` or `<error>`) or skipped (`<skipped>`); failing names are `classname > name`. Entities are
 * decoded; DOCTYPE entity expansion is not performed.
 *
 * @example
 * parseJunitXml('<testsuite><testcase classname="a" name="b"><failure/></testcase></testsuite>').failing; // ['a > b']
 */
export function parseJunitXml(log: string): TestReport {
  const start = log.indexOf('<');
  const xml = start < 0 ? '' : log.slice(start);
  const valid = XMLValidator.validate(xml);
  if (valid !== true)
    throw refuse('invalid_arguments', 'bad_log', `log: not well-formed XML (${valid.err.msg}, line ${valid.err.line})`, { field: 'log' });
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    processEntities: true,
    htmlEntities: false,
    allowBooleanAttributes: true,
  });
  const doc = parser.parse(xml) as Node;
  const root = (doc.testsuites ?? doc.testsuite) as Node | undefined;
  if (root === undefined) throw refuse('invalid_arguments', 'bad_log', 'log: no <testsuites> or <testsuite> element', { field: 'log' });
  const cases = doc.testsuites !== undefined ? testcases(root, []) : asArray(doc.testsuite).flatMap((s) => testcases(s, []));
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const failing: string[] = [];
  for (const c of cases) {
    if (c.failure !== undefined || c.error !== undefined) {
      failed++;
      const cls = typeof c['@_classname'] === 'string' ? `${c['@_classname']} > ` : '';
      failing.push(`${cls}${String(c['@_name'] ?? '(unnamed)')}`);
    } else if (c.skipped !== undefined) skipped++;
    else passed++;
  }
  return report('junit_xml', { passed, failed, skipped }, failing);
}
