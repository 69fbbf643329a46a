import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, expectRefused, libosOn, startLibos, tempStore, writeScript } from '../testing/libos-bin.js';
import { resumeScript } from './script-resume.js';

let dir: string;
beforeAll(() => {
  assertBuilt();
  dir = tempStore('libos-run-').dir;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A fresh store per test, so counts are exact. */
const fresh = (env: Record<string, string | undefined> = {}) => libosOn(`${dir}/s${++n}.db`, env);

const YAML_SCRIPT = `# a YAML script: one queue per pid ("*" = every process)
processes:
  "*":
    - - tool: get_current_time
    - - tool: process_exit
        args: { message: done }
`;

describe('libos run', { timeout: 120_000 }, () => {
  it('runs a YAML script: one line per quantum, an idle summary, and the model calls recorded', () => {
    const { run, json } = fresh();
    const pid = json('spawn', '--goal', 'tell the time, then exit').pid;
    json('grant', pid, 'clock:now', 'read');
    const script = writeScript(dir, 'time.yaml', YAML_SCRIPT);
    const r = run('run', '--script', script);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^q1 +${pid} +turn +completed +get_current_time$`));
    expect(lines[1]).toMatch(new RegExp(`^q2 +${pid} +turn +process_terminal +process_exit$`));
    expect(lines[2]).toBe('run: 2 quanta, idle (nothing runnable)');
    expect(lines[3]).toBe('processes: exited 1');
    expect(json('show', pid)).toMatchObject({ status: 'exited' });
    const calls = json('llm-calls', '--pid', pid);
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ pid, status: 'ok', provider: 'scripted', model: 'scripted', total_tokens: 2, error: null });
    const table = run('llm-calls');
    expect(table.stdout.split('\n')[0]).toMatch(/^ID +PID +STATUS +MODEL +TOKENS +LATENCY +ERROR$/);
    expect(table.stdout).toContain('scripted/scripted  1+1=2');
  });

  it('--max-quanta stops budget-limited, and a rerun continues each process where its script stopped', () => {
    const { run, json } = fresh();
    const pid = json('spawn', '--goal', 'two turns').pid;
    json('grant', pid, 'clock:now', 'read');
    const script = writeScript(dir, 'two.yaml', YAML_SCRIPT);
    const first = run('run', '--script', script, '--max-quanta', '1');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^q1 .* get_current_time\n/);
    expect(first.stdout).toContain('run: 1 quantum, budget-limited (--max-quanta 1 spent; work remains)');
    expect(first.stdout).toContain('processes: runnable 1');
    const second = run('run', '--script', script);
    expect(second.code, second.stderr).toBe(0);
    // Turn 1 is not replayed: the next model turn is the script's second one.
    expect(second.stdout).toMatch(/^q1 .* process_exit\n/);
    expect(second.stdout).not.toContain('get_current_time');
    expect(json('llm-calls', '--pid', pid)).toHaveLength(2);
  });

  it('--pid runs only that process and its descendants; others are held paused and resumed', () => {
    const { run, json } = fresh();
    const a = json('spawn', '--goal', 'a').pid;
    const b = json('spawn', '--goal', 'b').pid;
    const script = writeScript(
      dir,
      'exit.json',
      JSON.stringify({ processes: { '*': [[{ tool: 'process_exit', args: { message: 'bye' } }]] } }),
    );
    const r = run('run', '--script', script, '--pid', a);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(a);
    expect(r.stdout.split('\n').filter((l) => l.startsWith('q'))).toHaveLength(1);
    expect(r.stdout).toContain(`held paused during the run and resumed: ${b}`);
    expect(json('show', a)).toMatchObject({ status: 'exited' });
    expect(json('show', b)).toMatchObject({ status: 'runnable' });
    expect(json('audit', '--action', 'process.signal').map((x: { decision: string }) => x.decision)).toEqual(['pause', 'resume']);
  });

  it('refuses bad flags, scripts and providers with one line and exit 2, writing nothing', () => {
    const { run, json } = fresh({ LIBOS_OPENAI_MODEL: undefined, OPENAI_MODEL: undefined });
    const pid = json('spawn', '--goal', 'stay runnable').pid;
    const before = { audit: json('audit', '--limit', '10000').length, events: json('events', '--limit', '10000').length };
    const good = writeScript(dir, 'ok.yaml', YAML_SCRIPT);
    expectRefused(run('run'), 2, '--provider scripted (the default) needs --script <file>');
    expectRefused(run('run', '--provider', 'openai'), 2, 'LIBOS_OPENAI_MODEL is not set');
    expectRefused(run('run', '--provider', 'openai', '--script', good), 2, '--script applies only to --provider scripted');
    expectRefused(run('run', '--script', writeScript(dir, 'bad.yaml', 'a: b: c\n')), 2, 'not valid YAML');
    expectRefused(run('run', '--script', writeScript(dir, 'bad.json', '[[{"tol": "x"}]]')), 2, 'script[0][0].tool: required');
    expectRefused(run('run', '--script', `${dir}/missing.yaml`), 2, 'cannot read');
    expectRefused(run('run', '--script', good, '--max-quanta', '0'), 2, '--max-quanta must be a positive integer');
    expectRefused(run('run', '--script', good, '--pid', 'pid_0000000000000000'), 1, 'process_not_found');
    expect(run('run', '--provider', 'gpt').code).toBe(2);
    expect(json('show', pid)).toMatchObject({ status: 'runnable' });
    expect(json('llm-calls')).toEqual([]);
    expect({ audit: json('audit', '--limit', '10000').length, events: json('events', '--limit', '10000').length }).toEqual(before);
  });

  it('--provider openai reads LIBOS_OPENAI_* from the environment and runs a process to exit', async () => {
    const requests: { model: string; auth: string | undefined }[] = [];
    const server: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        requests.push({ model: JSON.parse(body).model, auth: req.headers.authorization });
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            id: 'cmpl-1',
            model: 'tiny-test-model',
            choices: [
              {
                index: 0,
                finish_reason: 'tool_calls',
                message: {
                  role: 'assistant',
                  content: null,
                  tool_calls: [
                    { id: 'call_1', type: 'function', function: { name: 'process_exit', arguments: '{"message":"done by openai"}' } },
                  ],
                },
              },
            ],
            usage: { prompt_tokens: 30, completion_tokens: 5, total_tokens: 35 },
          }),
        );
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as { port: number };
      const db = `${dir}/openai.db`;
      const env = {
        LIBOS_OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
        LIBOS_OPENAI_MODEL: 'tiny-test-model',
        LIBOS_OPENAI_API_KEY: 'sk-test',
      };
      const { json } = libosOn(db);
      const pid = json('spawn', '--goal', 'exit at once').pid;
      // The server lives in this process, so the binary must run asynchronously.
      const running = startLibos(db, ['run', '--provider', 'openai'], env);
      expect(await running.exited, running.stderr).toBe(0);
      expect(running.stdout).toMatch(new RegExp(`q1 +${pid} +turn +process_terminal +process_exit`));
      expect(requests).toEqual([{ model: 'tiny-test-model', auth: 'Bearer sk-test' }]);
      expect(json('show', pid)).toMatchObject({ status: 'exited' });
      expect(json('llm-calls')).toMatchObject([{ pid, provider: 'openai', model: 'tiny-test-model', total_tokens: 35, status: 'ok' }]);
    } finally {
      server.close();
    }
  });
});

describe('resumeScript', () => {
  const a = [{ tool: 'a' }];
  const b = [{ tool: 'b' }];
  it('drops the turns each pid consumed from its own queue or its copy of "*"', () => {
    const script = { processes: { p1: [a, b], '*': [b, a] } };
    expect(resumeScript(script, ['p1', 'p2', 'p3'], (pid) => ({ p1: 1, p2: 2, p3: 0 })[pid] ?? 0)).toEqual({
      processes: { p1: [b], '*': [b, a], p2: [] },
    });
  });
  it('drops the turns all pids consumed together from a shared queue', () => {
    expect(resumeScript([a, b, a], ['p1', 'p2'], () => 1)).toEqual([a]);
    expect(resumeScript({ turns: [a, b] }, ['p1'], () => 0)).toEqual([a, b]);
  });
});
