import { realpathSync, statSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { loadLlmScriptFile, openAiProviderFromEnv, ScriptedProvider, type LlmProvider, type QuantumResult } from '@libos/kernel';
import { isLibosError, SERVICE_NAMES, type ObjectsService, resources } from '@libos/sdk';
import { print, UsageError } from '../output.js';
import type { CommandKit } from './kit.js';
import { parsePositiveInt } from './parse.js';
import { quantumLine } from './run.js';
import { withLocalRuntime } from './with-runtime.js';

interface CodeFlags {
  readonly goal: string;
  readonly shell: string[];
  readonly provider: 'openai' | 'scripted';
  readonly script?: string;
  readonly maxQuanta: string;
  readonly toolCalls?: string;
}

const PROGRAM = /^(\*|[A-Za-z0-9._+-]{1,255})$/;
const firstLine = (text: string) => text.split('\n').find((l) => l.trim() !== '') ?? text;

/** The model, settled before the store is opened (a bad flag or a missing variable writes nothing). */
async function chooseProvider(flags: CodeFlags): Promise<LlmProvider> {
  try {
    if (flags.provider === 'openai') {
      if (flags.script !== undefined) throw new UsageError('code: --script applies only to --provider scripted');
      return openAiProviderFromEnv(process.env);
    }
    if (flags.script === undefined) throw new UsageError('code: --provider scripted needs --script <file>');
    return new ScriptedProvider(await loadLlmScriptFile(flags.script));
  } catch (err) {
    if (isLibosError(err)) throw new UsageError(`code: ${firstLine(err.message)}`);
    throw err;
  }
}

/**
 * `libos code <dir>`: runs `coding-agent:v0` on a directory in one runtime (so the goal and every result stay live
 * through the completion review): spawns it with `<dir>` as its working directory, grants it `fs:<dir>/*` read and
 * write, `git:<dir>` read and write and `shell:<program>` execute for each `--shell`, then runs the scheduler until
 * nothing is runnable (or `--max-quanta`), printing one line per quantum and the outcome. Exit 0 only when the agent
 * exited through its review.
 */
async function codeCommand(cmd: Command, kit: CommandKit, dirArg: string, flags: CodeFlags): Promise<number> {
  const o = kit.g(cmd);
  if (!statSync(dirArg, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`code: ${dirArg} is not a directory`);
  const dir = realpathSync(dirArg);
  for (const p of flags.shell)
    if (!PROGRAM.test(p)) throw new UsageError(`code: --shell ${JSON.stringify(p)} must be a program name or "*"`);
  const maxQuanta = parsePositiveInt(flags.maxQuanta, '--max-quanta');
  const budget = flags.toolCalls ? { tool_calls: parsePositiveInt(flags.toolCalls, '--tool-calls') } : undefined;
  const provider = await chooseProvider(flags);
  let exited = false;
  await withLocalRuntime(o, async (rt) => {
    const p = await rt.spawn({ image: 'coding-agent:v0', goal: flags.goal, workingDirectory: dir, ...(budget ? { budget } : {}) });
    const grants: [string, ('read' | 'write' | 'execute')[]][] = [
      [resources.fs(`${dir}/*`), ['read', 'write']],
      [resources.git(dir), ['read', 'write']],
      ...flags.shell.map((s): [string, 'execute'[]] => [resources.shell(s), ['execute']]),
    ];
    for (const [resource, rights] of grants) await rt.grant(p.pid, resource, rights);
    if (!o.json) {
      process.stdout.write(`${p.pid} coding-agent:v0 in ${dir}\n`);
      for (const [resource, rights] of grants) process.stdout.write(`  grant ${rights.join(',')} on ${resource}\n`);
    }
    const log: Record<string, unknown>[] = [];
    const onQuantum = (q: QuantumResult) => {
      log.push({
        pid: q.pid,
        kind: q.kind,
        stop_reason: q.stopReason ?? null,
        executed: q.executed,
        errors: q.results.flatMap((r) => (r.ok ? [] : [r.error.code])),
      });
      if (!o.json) process.stdout.write(`${quantumLine(log.length, q)}\n`);
    };
    const run = await rt.run({ provider, maxQuanta, onQuantum });
    const proc = await rt.process(p.pid);
    exited = proc.status === 'exited';
    const resultOid = (proc.outcome?.result_oid as string | null | undefined) ?? null;
    const result = resultOid
      ? await rt.transaction((scope) => scope.service<ObjectsService>(SERVICE_NAMES.objects).readPayload(resultOid))
      : null;
    const report = {
      pid: p.pid,
      directory: dir,
      status: proc.status,
      quanta: run.quanta,
      idle: run.idle,
      outcome: proc.outcome,
      result,
      log,
    };
    const spent = `${run.quanta} ${run.quanta === 1 ? 'quantum' : 'quanta'}${run.idle ? '' : ` (--max-quanta ${maxQuanta} spent)`}`;
    print(o, report, () =>
      [
        `${p.pid} ${proc.status} after ${spent}`,
        ...(result !== null ? [`result: ${JSON.stringify(result)}`] : proc.outcome ? [`outcome: ${JSON.stringify(proc.outcome)}`] : []),
      ].join('\n'),
    );
  });
  return exited ? 0 : 1;
}

/** Registers `libos code`. */
export function registerCode(program: Command, kit: CommandKit): void {
  program
    .command('code <dir>')
    .description(
      'run coding-agent:v0 on a directory in one runtime: grants fs:<dir>/* and git:<dir> read+write (and --shell programs), runs it ' +
        'to its exit',
    )
    .requiredOption('--goal <text>', 'what the agent must achieve')
    .option(
      '--shell <program>',
      'grant shell:<program> execute (repeatable; "*" for every program)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .addOption(
      new Option('--provider <name>', 'the model: openai (LIBOS_OPENAI_* / OPENAI_* env) or scripted (needs --script)')
        .choices(['openai', 'scripted'])
        .default('openai'),
    )
    .option('--script <file>', 'LLM script for --provider scripted (.json, .yaml, .yml)')
    .option('--max-quanta <n>', 'quanta the run may spend', '100')
    .option('--tool-calls <n>', 'tool-call budget of the agent (default 256)')
    .action(kit.act((cmd: Command, dir: string, flags: CodeFlags) => codeCommand(cmd, kit, dir, flags)));
}
