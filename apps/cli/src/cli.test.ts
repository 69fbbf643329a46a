import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The real binary, as a user runs it (`npm test` builds it first).
const BIN = fileURLToPath(new URL('../dist/index.js', import.meta.url));
let dir: string;
let db: string;

function libos(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, '--db', db, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const json = (...args: string[]) => {
  const r = libos('--json', ...args);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run "npm run build" (npm test builds it) before these tests`);
  dir = mkdtempSync(join(tmpdir(), 'libos-cli-'));
  db = join(dir, 'libos.db');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('libos CLI', () => {
  let pid: string;

  it('init creates the store; spawn, ps and show describe the process', () => {
    expect(json('init')).toMatchObject({ db });
    pid = json('spawn', '--goal', 'demo goal').pid;
    expect(pid).toMatch(/^pid_[0-9a-f]{16}$/);
    const ps = json('ps');
    expect(ps.map((p: { pid: string }) => p.pid)).toContain(pid);
    const show = libos('show', pid);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('image:    base-agent:v0');
    expect(show.stdout).toContain('status:   runnable');
  });

  it('grant and caps: a host grant shows in the process capabilities', () => {
    const cap = json('grant', pid, 'skill:agent-libos-object-memory', 'execute', '--uses', '3');
    expect(cap).toMatchObject({ subject: pid, resource: 'skill:agent-libos-object-memory', rights: ['execute'], uses_remaining: 3 });
    const caps = json('caps', pid);
    expect(caps.map((c: { id: string }) => c.id)).toContain(cap.id);
  });

  it('call prints the result envelope; a refused call exits 1', () => {
    const ok = libos('call', pid, 'activate_skill', '{"skill_id":"agent-libos-object-memory"}');
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, tool: 'activate_skill' });
    const refused = libos('call', pid, 'create_memory_namespace', '{"namespace":"team/x"}');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, error: { category: 'permission_denied' } });
  });

  it('call of an unknown pid, unknown tool or unparsable JSON prints one line, exits non-zero and writes nothing', () => {
    const before = json('audit', '--limit', '10000').length;
    const cases = [
      libos('call', 'pid_0000000000000000', 'discover_skills', '{}'),
      libos('call', pid, 'no_such_tool', '{}'),
      libos('call', pid, 'discover_skills', '{not json'),
    ];
    for (const r of cases) {
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(cases[0]!.stderr).toContain('process_not_found');
    expect(cases[1]!.stderr).toContain('tool_not_found');
    expect(cases[2]!.code).toBe(2);
    expect(cases[2]!.stderr).toContain('arguments is not valid JSON');
    expect(json('audit', '--limit', '10000').length).toBe(before);
  });

  it('usage errors exit 2', () => {
    expect(libos('spawn').code).toBe(2);
    expect(libos('grant', pid, 'note:x', 'fly').code).toBe(2);
    expect(libos('frobnicate').code).toBe(2);
  });

  it('skills lists the catalog; skills validate reports each problem of a bad folder', () => {
    const cat = json('skills');
    expect(cat.map((s: { skill_id: string }) => s.skill_id)).toEqual(
      expect.arrayContaining(['agent-libos-skill-navigation', 'agent-libos-object-memory']),
    );
    const good = join(dir, 'good', 'skills', 'my-skill');
    mkdirSync(good, { recursive: true });
    writeFileSync(join(good, 'SKILL.md'), '---\nname: my-skill\ndescription: Does one thing.\nallowed-tools: my_tool\n---\nUse my_tool.\n');
    const okRun = libos('skills', 'validate', join(dir, 'good'));
    expect(okRun.code, okRun.stderr).toBe(0);
    expect(okRun.stdout).toContain('ok: 1 skill(s) valid');
    const bad = join(dir, 'bad', 'skills', 'wrong-dir');
    mkdirSync(bad, { recursive: true });
    writeFileSync(join(bad, 'SKILL.md'), '---\nname: other-name\ndescription: x\nextra: 1\n---\nBody.\n');
    const badRun = libos('skills', 'validate', join(dir, 'bad'));
    expect(badRun.code).toBe(1);
    expect(badRun.stdout).toContain('SKILL.md: name: must equal its folder name "wrong-dir"');
    expect(badRun.stdout).toContain('SKILL.md: extra: unknown key');
  });

  it('audit shows the calls made', () => {
    const rows = json('audit', '--pid', pid, '--action', 'tool.call');
    expect(rows.map((r: { decision: string }) => r.decision)).toEqual(['ok', 'namespace_denied']);
  });

  it('demo tells the parent / worker / human story as a numbered trace, checks every step and exits 0', () => {
    const r = spawnSync(process.execPath, [BIN, 'demo'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const steps = r.stdout.split('\n').filter((l) => /^ ?\d+\. /.test(l));
    expect(steps.length).toBeGreaterThanOrEqual(20);
    expect(steps.map((l) => Number(l.trim().split('.')[0]))).toEqual(steps.map((_, i) => i + 1));
    const story = [
      'host spawns the parent pid_0000000000000001 from base-agent:v0',
      'parent creates namespace team/notes → refused namespace_denied',
      'parent spawns a worker → ok: worker pid_',
      'worker asks the human "Which region should I survey?" → waits (waiting_human)',
      'the human answers "the north coast" (rt.answerHuman) → approved; the worker is runnable',
      'worker resumes ask_human without a model call → answer "the north coast"',
      'worker sends {"region":"the north coast","sites":3} to the parent → ok',
      'parent resumes receive_process_messages without a model call → 1 message: from the worker',
      'parent sends {"text":"Thanks; wrap up."} to the worker → ok',
      'worker exits with',
      'parent resumes wait_child_process without a model call → the worker exited',
      'parent exits with',
      'parent exited, worker exited',
    ];
    let at = -1;
    for (const text of story) {
      const i = steps.findIndex((l, k) => k > at && l.includes(text));
      expect(i, `step "${text}" after step ${at + 1} in:\n${steps.join('\n')}`).toBeGreaterThan(at);
      at = i;
    }
    expect(steps.find((l) => l.includes('the record:'))).toMatch(
      /the record: 12 model calls \(parent 7, worker 5; 24 tokens\), 4 resumed waits with no model call, \d+ audit records, \d+ events/,
    );
    // The checkpoint scene: capture, a risky change, restore; the change is gone and the audit intact.
    expect(steps.some((l) => /the keeper checkpoints its subtree → ckpt_[0-9a-f]{16}/.test(l))).toBe(true);
    expect(
      steps.some((l) =>
        /the change is gone: the ledger is at version 3 again with its 2 sites; the stray Object reads object_not_found/.test(l),
      ),
    ).toBe(true);
    expect(steps.some((l) => /the audit trail is intact: all \d+ earlier records kept, \d+ added by the restore/.test(l))).toBe(true);
    // The compaction scene: the scribe's context is compacted by two compressors and it goes on working.
    expect(steps.some((l) => l.includes('the runtime compacts its context instead of asking the model'))).toBe(true);
    expect(steps.some((l) => /scribe resumes compact_process_context → compacted: version \d+ → \d+/.test(l))).toBe(true);
    expect(steps.some((l) => /context after: version \d+ → \d+, generation ctxgen_\w+ → ctxgen_\w+/.test(l))).toBe(true);
    expect(r.stdout).toContain('audit by action: ');
    expect(r.stdout).toContain('visibility is never authority');
  });

  it('demo --json gives the steps and counts; demo refuses a --db that already exists (exit 2)', () => {
    const fresh = join(dir, 'demo.db');
    const r = spawnSync(process.execPath, [BIN, '--db', fresh, '--json', 'demo'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ db: fresh, ok: true, parent: 'pid_0000000000000001', llm_calls: 12, resumed: 4 });
    expect(out.steps.length).toBeGreaterThanOrEqual(20);
    // The store stays for inspection with the other commands.
    const ps = spawnSync(process.execPath, [BIN, '--db', fresh, '--json', 'ps'], { encoding: 'utf8' });
    expect(JSON.parse(ps.stdout).every((p: { status: string }) => p.status === 'exited')).toBe(true);
    expect(out.compaction).toMatchObject({ compressors: [expect.any(String), expect.any(String)] });
    expect(out.checkpoint).toMatchObject({ checkpoint: expect.stringMatching(/^ckpt_/), restore: expect.stringMatching(/^restore_/) });
    const again = spawnSync(process.execPath, [BIN, '--db', fresh, 'demo'], { encoding: 'utf8' });
    expect(again.status).toBe(2);
    expect(again.stdout).toBe('');
    expect(again.stderr.trim().split('\n')).toHaveLength(1);
    expect(again.stderr).toContain('already exists; the demo writes a fresh store');
  });
});
