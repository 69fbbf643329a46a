import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';

// `libos code` as a user runs it (the built binary), with --provider openai against a chat-completions server on
// 127.0.0.1 that plays a coding agent: it reads the review token and goal from the prompt, as a model would.
const BIN = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../../../../scenarios/src/fixtures/workspace-repo', import.meta.url));
const TEST = ['node', '--test', '--test-reporter=tap', '--test-reporter-destination=test-results.tap', 'test/'];
const TURNS: [string, Record<string, unknown>][] = [
  ['run_shell_command', { argv: TEST }],
  ['parse_test_log', { path: 'test-results.tap' }],
  ['edit_file', { path: 'src/math.js', old_text: 'return a - b;', new_text: 'return a + b;' }],
  ['run_shell_command', { argv: TEST }],
  ['parse_test_log', { path: 'test-results.tap' }],
  ['git_add', { paths: ['src/math.js'] }],
  ['git_commit', { message: 'Fix add()' }],
  ['process_exit', {}],
];

let dir: string;
let server: Server;
let baseUrl: string;
beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run "npm run build" (npm test builds it) before these tests`);
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'libos-code-')));
  let i = 0;
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const prompt = JSON.stringify(JSON.parse(body).messages);
      let call = TURNS[i++];
      if (!call) {
        const token = [...prompt.matchAll(/exitrev_[0-9a-f]{64}/g)].pop()![0];
        const goal = /goal_oid\\":\\"(obj_[0-9a-f]{16})/.exec(prompt)![1]!;
        const check = {
          requirement: 'tests pass, fix committed',
          source_refs: [goal],
          status: 'completed',
          evidence_tool_calls: ['edit_file', 'parse_test_log', 'git_commit'],
          evidence_summary: 'add() fixed; committed',
        };
        call = [
          'process_exit',
          {
            review_token: token,
            completion_evidence: {
              goal_oid: goal,
              reviewed_message_ids: [],
              acceptance_checks: [check],
              final_verification: ['parse_test_log'],
            },
          },
        ];
      }
      const message = {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${i}`, type: 'function', function: { name: call[0], arguments: JSON.stringify(call[1]) } }],
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'x',
          model: 'fake',
          choices: [{ index: 0, message, finish_reason: 'tool_calls' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the binary without blocking this process (the fake model answers from it). */
function libos(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    LIBOS_OPENAI_BASE_URL: baseUrl,
    LIBOS_OPENAI_MODEL: 'fake',
    LIBOS_OPENAI_API_KEY: 'sk-local',
  };
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, '--db', join(dir, 'libos.db'), ...args], { env, encoding: 'utf8' }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

it('libos code runs coding-agent:v0 on a directory to its reviewed exit, printing grants, quanta and the result', async () => {
  const repo = join(dir, 'tiny-math');
  cpSync(FIXTURE, repo, { recursive: true });
  const git = (...a: string[]) => execFileSync('git', ['-c', 'user.name=f', '-c', 'user.email=f@x', ...a], { cwd: repo, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  const r = await libos(
    'code',
    repo,
    '--shell',
    'node',
    '--goal',
    'Make the tests pass, record them with `parse_test_log`, commit with `git_commit`.',
  );
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain(`coding-agent:v0 in ${repo}`);
  expect(r.stdout).toContain(`grant read,write on fs:${repo}/*`);
  expect(r.stdout).toContain('grant execute on shell:node');
  expect(r.stdout).toMatch(/q3 +pid_\w+ +turn +completed +edit_file/);
  expect(r.stdout).toMatch(/exited after \d+ quanta/);
  expect(readFileSync(join(repo, 'src/math.js'), 'utf8')).toContain('return a + b;');
  expect(git('log', '-1', '--format=%s').trim()).toBe('Fix add()');
});

it('libos code refuses a path that is not a directory (usage error, exit 2)', async () => {
  const r = await libos('code', join(dir, 'missing'), '--goal', 'x');
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('is not a directory');
});
