import { createHash } from 'node:crypto';
import { defineTool, SERVICE_NAMES, z, type ObjectsService } from '@libos/sdk';
import type { WorkspaceConfig } from '../config.js';
import { refuse } from '../internal/errors.js';
import { readTextFile } from '../internal/file-io.js';
import { requireFs } from '../internal/fs-access.js';
import { observeExternal } from '../internal/observe.js';
import { MAX_PATH_CHARS } from '../internal/path-text.js';
import { parseTestLogText } from '../test-logs/parse-log.js';
import { TEST_LOG_FORMATS } from '../test-logs/test-report.js';
import { namespaces } from '@libos/sdk';

/** Where `parse_test_log` keeps its `test_result` Objects: a child of the process scope. */
export const testResultsNamespace = (pid: string): string => namespaces.testResults(pid);

/** Largest log given inline, in characters (a larger one is read from a file). */
export const MAX_INLINE_LOG_CHARS = 900_000;

/**
 * `parse_test_log`: reads a test runner's log (Jest/Vitest JSON, TAP, pytest, JUnit XML; detected by default),
 * given inline or as a file (`read` on `fs:<path>`), and stores what it says as an immutable `test_result` Object in
 * `process:<pid>/test_results`: passed, failed and skipped counts and the failing test names. The Object's id is
 * evidence a completion review can cite (with this tool's name).
 */
export const parseTestLog = (cfg: WorkspaceConfig) =>
  defineTool({
    name: 'parse_test_log',
    description:
      'Parse a test log (jest_json, vitest_json, tap, pytest, junit_xml; auto-detected) given as log text or a file path. Stores a ' +
      'test_result Object (passed, failed, skipped, failing test names) and returns its oid with the counts; ok is true only when ' +
      'tests ran and none failed. Reading a file needs read on fs:<absolute path>.',
    input: z.object({
      log: z.string().min(1).max(MAX_INLINE_LOG_CHARS).optional().describe('the log text (e.g. stdout of run_shell_command)'),
      path: z.string().min(1).max(MAX_PATH_CHARS).optional().describe('a file holding the log, e.g. a JUnit XML or JSON report'),
      format: z.enum(['auto', ...TEST_LOG_FORMATS]).default('auto'),
      name: z.string().min(1).max(128).optional().describe('name of the test_result Object (default test_result_<call id>)'),
    }),
    async run(args, ctx) {
      if ((args.log === undefined) === (args.path === undefined)) {
        throw refuse('invalid_arguments', 'conflicting_arguments', 'log, path: give exactly one (the log text, or a file holding it)', {
          field: 'log',
        });
      }
      let text: string;
      let source: string | null = null;
      if (args.path !== undefined) {
        const p = await requireFs(ctx, cfg.baseDirectory, args.path, ['read'], { field: 'path' });
        if (p.kind === null) throw refuse('not_found', 'not_found', `path: ${p.real} does not exist`, { field: 'path', path: p.real });
        text = readTextFile(p.real, 'path').text;
        source = p.real;
        await observeExternal(ctx);
      } else text = args.log!;
      const report = parseTestLogText(text, args.format);
      const ok = report.failed === 0 && report.total > 0;
      const payload = {
        ...report,
        ok,
        source: { path: source, log_sha256: createHash('sha256').update(text, 'utf8').digest('hex'), log_chars: text.length },
      };
      const objects = ctx.service<ObjectsService>(SERVICE_NAMES.objects);
      const ref = await objects.createForProcess(ctx.pid, {
        type: 'test_result',
        name: args.name ?? `test_result_${ctx.callId.replace(/[^A-Za-z0-9_.-]/g, '_')}`,
        namespace: testResultsNamespace(ctx.pid),
        ensureNamespace: true,
        payload,
        immutable: true,
        metadata: { title: `tests: ${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped (${report.format})` },
        labels: await ctx.flow.labels(),
        sourceOids: ctx.flow.sources(),
        attachToView: false,
      });
      return { oid: ref.oid, namespace: ref.namespace, name: ref.name, ok, ...report };
    },
  });
