// End to end (issue 13): coding-agent:v0 fixes a failing test in a small repository. A scripted model reads the
// failing test, runs the suite, parses the log, edits the source, runs and parses again, commits, and exits through
// the completion review citing the test_result. The same tool calls are then replayed through the OpenAI-compatible
// provider against a chat-completions server on 127.0.0.1. Everything is real: SQLite, files, git, node --test.
import { cpSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OpenAiProvider, ScriptedProvider, type LlmScript, type ScriptedTurn } from '@libos/kernel';
import { acknowledgedMessagesSha256, reviewToken } from '@libos/session';
import { afterEach, describe, expect, it } from 'vitest';
import { git, openWorkspaceHarness, type Json, type WorkspaceHarness } from './support/workspace-harness.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/workspace-repo', import.meta.url));
const CODING = 'coding-agent:v0';
const GOAL =
  'Make the test suite of this repository pass. Find the failing test, fix the source (not the test), run the tests ' +
  'with `run_shell_command` (node --test), record the result with `parse_test_log`, and commit the fix with `git_commit`.';
/** Spec output on stdout for reading, TAP in a file for parse_test_log. */
const NODE_TEST = [
  'node',
  '--test',
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  '--test-reporter=tap',
  '--test-reporter-destination=test-results.tap',
  'test/math.test.js',
];

let h: WorkspaceHarness | undefined;
const servers: Server[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve, reject) => s.close((err) => (err ? reject(err) : resolve())));
  }
});

/** The fixture copied to a temporary directory and committed as the first commit of a fresh repository. */
function fixtureRepo(dir: string): { repo: string; base: string } {
  const repo = join(dir, 'tiny-math');
  cpSync(FIXTURE, repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'tiny-math with a wrong add()');
  return { repo, base: git(repo, 'rev-parse', 'HEAD').trim() };
}

/** A coding agent working in `repo`, with exactly the grants the job needs. */
async function codingAgent(harness: WorkspaceHarness, repo: string): Promise<{ pid: string; goalOid: string; token: string }> {
  const p = await harness.rt.spawn({ image: CODING, goal: GOAL, workingDirectory: repo });
  await harness.rt.grant(p.pid, `fs:${repo}/*`, ['read', 'write']);
  await harness.rt.grant(p.pid, 'shell:node', ['execute']);
  await harness.rt.grant(p.pid, `git:${repo}`, ['read', 'write']);
  // The review token a bare process_exit will return: the goal, its version, no human messages.
  const token = reviewToken({ goalOid: p.goalOid!, goalVersion: 1, humanMessages: [], acknowledgedSha256: acknowledgedMessagesSha256([]) });
  return { pid: p.pid, goalOid: p.goalOid!, token };
}

/** What the agent does, one tool call a turn. */
function agentTurns(goalOid: string, token: string): ScriptedTurn[] {
  const call = (tool: string, args: Record<string, unknown> = {}): ScriptedTurn => [{ tool, args }];
  return [
    call('list_files', { glob: '**/*.js' }),
    call('read_file', { path: 'test/math.test.js' }),
    call('run_shell_command', { argv: NODE_TEST, timeout_seconds: 60 }),
    call('parse_test_log', { path: 'test-results.tap', name: 'before_fix' }),
    call('read_file', { path: 'src/math.js' }),
    call('edit_file', { path: 'src/math.js', old_text: 'return a - b;', new_text: 'return a + b;' }),
    call('run_shell_command', { argv: NODE_TEST, timeout_seconds: 60 }),
    call('parse_test_log', { path: 'test-results.tap', name: 'after_fix' }),
    call('git_diff', {}),
    call('git_add', { paths: ['src/math.js'] }),
    call('git_commit', { message: 'Fix add(): it subtracted its arguments' }),
    call('git_status', {}),
    call('process_exit', {}),
    call('process_exit', {
      review_token: token,
      payload: { summary: 'add() fixed; node --test passes; committed' },
      completion_evidence: {
        goal_oid: goalOid,
        reviewed_message_ids: [],
        acceptance_checks: [
          {
            requirement: 'fix the source so the failing test passes, without changing the test',
            source_refs: [goalOid],
            status: 'completed',
            evidence_tool_calls: ['read_file', 'edit_file', 'run_shell_command', 'parse_test_log'],
            evidence_summary:
              'src/math.js add() returned a - b; edited to a + b. test_result after_fix: 2 passed, 0 failed (before_fix: 1 failed).',
          },
          {
            requirement: 'commit the fix',
            source_refs: [goalOid],
            status: 'completed',
            evidence_tool_calls: ['git_add', 'git_commit', 'git_status'],
            evidence_summary: 'committed src/math.js on main; git_status shows a clean tree',
          },
        ],
        final_verification: ['parse_test_log', 'git_status'],
      },
    }),
  ];
}

/** What must hold after either run: the fix committed, the tests recorded, the review passed, the process exited. */
async function expectFixed(harness: WorkspaceHarness, pid: string, repo: string, base: string): Promise<void> {
  const { rt } = harness;
  const proc = await rt.process(pid);
  expect(proc.status).toBe('exited');
  expect(readFileSync(join(repo, 'src/math.js'), 'utf8')).toContain('return a + b;');
  expect(readFileSync(join(repo, 'test/math.test.js'), 'utf8')).toBe(readFileSync(join(FIXTURE, 'test/math.test.js'), 'utf8'));
  expect(git(repo, 'log', '--format=%s', `${base}..HEAD`).trim()).toBe('Fix add(): it subtracted its arguments');
  expect(git(repo, 'show', '--name-only', '--format=', 'HEAD').trim()).toBe('src/math.js');
  expect(git(repo, 'status', '--porcelain')).toBe('');

  // The root's exit released its Objects (session S-E8): their rows remain, and the payloads they held while it worked.
  const ns = `process:${pid}/test_results`;
  const row = (name: string) =>
    rt.transaction(async (scope) =>
      (scope.store as Json)
        .selectFrom('om_objects')
        .selectAll()
        .where('namespace', '=', ns)
        .where('name', '=', name)
        .executeTakeFirstOrThrow(),
    );
  const [before, after] = [await row('before_fix'), await row('after_fix')];
  const results = {
    before: harness.heldPayloads.get(before.oid),
    after: harness.heldPayloads.get(after.oid),
    afterRef: { type: after.type, lifecycle: after.lifecycle_state },
  };
  expect(results.before).toMatchObject({ format: 'tap', passed: 1, failed: 1, failing: ['add sums two numbers'], ok: false });
  expect(results.after).toMatchObject({ format: 'tap', passed: 2, failed: 0, failing: [], ok: true });
  expect(results.afterRef).toMatchObject({ type: 'test_result', lifecycle: 'released' });

  expect(await rt.audit({ pid, action: 'process.exit_review_required' })).toHaveLength(1);
  expect(await rt.audit({ pid, action: 'process.exit_review_passed' })).toEqual([
    expect.objectContaining({ decision: 'passed', details: expect.objectContaining({ acceptance_check_count: 2 }) }),
  ]);
  const edits = await rt.audit({ pid, action: 'workspace.file.edit' });
  expect(edits).toEqual([
    expect.objectContaining({
      target: `fs:${join(repo, 'src/math.js')}`,
      details: expect.objectContaining({ sha256_before: expect.any(String), sha256_after: expect.any(String), replacements: 1 }),
    }),
  ]);
  const shells = await rt.audit({ pid, action: 'workspace.shell.run' });
  expect(shells.map((r) => [r.target, r.details.exit_code])).toEqual([
    ['shell:node', 1],
    ['shell:node', 0],
  ]);
  const failedCalls = (await rt.audit({ pid, action: 'tool.call' })).filter((r) => r.decision !== 'ok');
  expect(failedCalls).toEqual([]);
}

describe('[WS-7] a coding agent fixes a failing test in a small repository', () => {
  it('with the scripted provider: read, test, parse, edit, test, parse, commit, exit through the completion review', async () => {
    h = await openWorkspaceHarness();
    const { repo, base } = fixtureRepo(h.dir);
    const agent = await codingAgent(h, repo);
    const tools = (await h.rt.process(agent.pid)).visibleTools;
    expect(tools).toEqual(
      expect.arrayContaining(['read_file', 'edit_file', 'run_shell_command', 'parse_test_log', 'git_commit', 'git_status']),
    );
    const provider = new ScriptedProvider(agentTurns(agent.goalOid, agent.token) as LlmScript);
    const report = await h.rt.run({ provider });
    expect(report.idle).toBe(true);
    expect(provider.calls).toBe(14);
    await expectFixed(h, agent.pid, repo, base);
    // The bare probe's review reached the model's last prompt: not an exit yet, with the observed tools listed.
    const lastPrompt = JSON.stringify(provider.requests[13]!.messages);
    expect(lastPrompt).toContain('completion_review_required');
    expect(lastPrompt).toContain(agent.token);
  });

  it('with the OpenAI-compatible provider against a local server replaying the same tool calls', async () => {
    h = await openWorkspaceHarness();
    const { repo, base } = fixtureRepo(h.dir);
    const agent = await codingAgent(h, repo);
    const turns = agentTurns(agent.goalOid, agent.token);
    const seen: Json[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        seen.push(body);
        const turn = turns[seen.length - 1] ?? [{ tool: 'process_exit', args: {} }];
        const message = {
          role: 'assistant',
          content: null,
          tool_calls: turn.map((c, j) => ({
            id: `call_${seen.length}_${j}`,
            type: 'function',
            function: { name: c.tool, arguments: JSON.stringify(c.args ?? {}) },
          })),
        };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: `chatcmpl-${seen.length}`,
            object: 'chat.completion',
            model: 'replay-model',
            choices: [{ index: 0, message, finish_reason: 'tool_calls' }],
            usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
          }),
        );
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const provider = new OpenAiProvider({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
      model: 'replay-model',
      apiKey: 'sk-local',
      sleep: async () => {},
      random: () => 0.5,
    });
    const report = await h.rt.run({ provider });
    expect(report.idle).toBe(true);
    expect(seen).toHaveLength(14);
    // The model was offered the workspace tools by name, with their JSON Schemas.
    const offered = (seen[0].tools as Json[]).map((t) => t.function.name);
    expect(offered).toEqual(expect.arrayContaining(['read_file', 'edit_file', 'run_shell_command', 'parse_test_log', 'git_commit']));
    // Each result reached the next (stateless) prompt: the failing test's name after the first parse.
    expect(JSON.stringify(seen[4].messages)).toContain('add sums two numbers');
    await expectFixed(h, agent.pid, repo, base);
    expect((await h.rt.llmCalls({ pid: agent.pid })).every((c) => c.provider === 'openai' && c.status === 'ok')).toBe(true);
  });
});
