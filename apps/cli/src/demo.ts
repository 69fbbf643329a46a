import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Runtime, ToolCallResult } from '@libos/kernel';
import { openStandardRuntime } from './compose.js';
import { EXIT, table } from './output.js';

export interface DemoOptions {
  /** Store file; default a fresh temp file, so every run starts clean. */
  readonly db?: string | undefined;
  readonly json: boolean;
}

interface Step {
  readonly step: string;
  readonly result?: unknown;
}

/**
 * The scripted demo: spawn a process, activate a Skill, one successful call and one refused call, and the audit
 * rows they left. Prints a readable trace (or JSON with --json). Exit 0 when every step behaved as expected.
 */
export async function runDemo(opts: DemoOptions): Promise<number> {
  const db = opts.db ?? join(mkdtempSync(join(tmpdir(), 'libos-demo-')), 'demo.db');
  const steps: Step[] = [];
  const say = (line: string) => {
    if (!opts.json) process.stdout.write(`${line}\n`);
  };
  const show = (r: ToolCallResult) => (r.ok ? `ok ${JSON.stringify(r.payload)}` : `refused ${r.error.code}: ${r.error.message}`);
  const expect = (cond: boolean, what: string) => {
    if (!cond) throw new Error(`demo: expected ${what}`);
  };

  const rt: Runtime = await openStandardRuntime(db);
  try {
    say(`libOS demo (store: ${db})\n`);
    const p = await rt.spawn({ goal: 'Keep a ledger of findings in Object Memory' });
    steps.push({ step: 'spawn', result: { pid: p.pid, image: p.imageId, visible: p.visibleTools } });
    say(`1. spawn ${p.pid} from ${p.imageId}`);
    say(`   goal: ${p.goal}`);
    say(`   visible tools: ${p.visibleTools.join(', ')}`);

    await rt.grant(p.pid, 'skill:agent-libos-object-memory', ['execute']);
    say(`2. host grants ${p.pid} execute on skill:agent-libos-object-memory (activation needs it; it grants nothing else)`);

    const act = await rt.call(p.pid, 'activate_skill', { skill_id: 'agent-libos-object-memory' });
    steps.push({ step: 'activate_skill', result: act });
    say(`3. ${p.pid} calls activate_skill → ${show(act)}`);
    expect(act.ok, 'activate_skill to succeed');

    const created = await rt.call(p.pid, 'create_memory_object', { type: 'plan', name: 'ledger', payload: { entries: [] }, immutable: false });
    steps.push({ step: 'create_memory_object (own scope)', result: created });
    say(`4. ${p.pid} creates plan "ledger" in its own scope process:${p.pid} → ${show(created)}`);
    expect(created.ok, 'create in the process scope to succeed');

    const appended = await rt.call(p.pid, 'append_memory_object', { name: 'ledger', entry: { finding: 'the broker checks authority at the effect' } });
    steps.push({ step: 'append_memory_object', result: appended });
    say(`5. ${p.pid} appends a finding → ${show(appended)}`);
    expect(appended.ok, 'append to succeed');

    const refused = await rt.call(p.pid, 'create_memory_namespace', { namespace: 'team/notes' });
    steps.push({ step: 'create_memory_namespace (no right)', result: refused });
    say(`6. ${p.pid} creates namespace team/notes without write on its parent → ${show(refused)}`);
    expect(!refused.ok && refused.error.category === 'permission_denied', 'the namespace create to be refused');

    const audit = await rt.audit({ pid: p.pid });
    steps.push({ step: 'audit', result: audit });
    say(`\n7. audit rows of ${p.pid}:`);
    say(table(audit.map((a) => ({ seq: a.seq, action: a.action, target: a.target, decision: a.decision })), ['seq', 'action', 'target', 'decision']));
    say('\nVisibility is never authority: the visible create_memory_namespace was refused at the effect.');
    if (opts.json) process.stdout.write(`${JSON.stringify({ db, steps }, null, 2)}\n`);
    return EXIT.ok;
  } finally {
    await rt.close();
  }
}
