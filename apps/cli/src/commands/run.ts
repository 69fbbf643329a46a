import { type Command, Option } from 'commander';
import {
  loadLlmScriptFile,
  openAiProviderFromEnv,
  providerFromProfile,
  resolveLlmProfile,
  ScriptedProvider,
  type HostConfig,
  type LlmProfile,
  type LlmProvider,
  type LlmScript,
  type ProcessInfo,
  type QuantumResult,
  type Runtime,
  type RuntimeEvent,
} from '@libos/kernel';
import { isLibosError } from '@libos/sdk';
import { EXIT, print, UsageError } from '../output.js';
import type { CommandKit } from './kit.js';
import { parsePositiveInt } from './parse.js';
import { resumeScript } from './script-resume.js';
import { hostConfigOf, withLocalRuntime } from './with-runtime.js';

interface RunFlags {
  readonly maxQuanta?: string;
  readonly provider: 'scripted' | 'openai';
  readonly script?: string;
  readonly pid?: string;
  readonly profile?: string;
}

/** What to build the provider from, settled before the store is opened (a bad flag writes nothing). */
type ProviderChoice = (
  | { readonly kind: 'scripted'; readonly script: LlmScript; readonly model?: string }
  | { readonly kind: 'openai'; readonly provider: LlmProvider }
) & { readonly profile: LlmProfile | null };

/**
 * The LLM profile of the run: `--profile <name>`, else the host config's `default_profile` unless `--provider` was
 * given explicitly; null without either (a batch then runs in order, as before profiles).
 */
function chooseProfile(flags: RunFlags, host: HostConfig, providerGiven: boolean): LlmProfile | null {
  try {
    if (flags.profile !== undefined) return resolveLlmProfile(host, flags.profile);
    return providerGiven ? null : resolveLlmProfile(host);
  } catch (err) {
    if (isLibosError(err)) throw new UsageError(`run: ${firstLine(err.message)}`);
    throw err;
  }
}

/** The provider a profile names: `script` reads `--script`; `openai` sends the profile's model, URL and max_tokens. */
async function profileProvider(
  flags: RunFlags,
  profile: LlmProfile,
  providerGiven: boolean,
  env: NodeJS.ProcessEnv,
): Promise<ProviderChoice> {
  const wanted = profile.provider === 'script' ? 'scripted' : 'openai';
  if (providerGiven && flags.provider !== wanted) {
    throw new UsageError(`run: --provider ${flags.provider} contradicts profile ${profile.name} (provider ${profile.provider})`);
  }
  if (profile.provider === 'openai') {
    if (flags.script !== undefined) throw new UsageError(`run: --script applies only to a scripted run; profile ${profile.name} is openai`);
    try {
      return { kind: 'openai', provider: providerFromProfile(profile, { env }), profile };
    } catch (err) {
      if (isLibosError(err)) throw new UsageError(`run: ${firstLine(err.message)}`);
      throw err;
    }
  }
  if (flags.script === undefined) {
    throw new UsageError(`run: profile ${profile.name} is scripted: it needs --script <file> (.json, .yaml or .yml)`);
  }
  return { kind: 'scripted', script: await scriptFile(flags.script), model: profile.model, profile };
}

async function scriptFile(path: string): Promise<LlmScript> {
  try {
    return await loadLlmScriptFile(path);
  } catch (err) {
    if (isLibosError(err)) throw new UsageError(`run: ${firstLine(err.message)}`);
    throw err;
  }
}

const firstLine = (text: string) => text.split('\n').find((l) => l.trim() !== '') ?? text;

export async function chooseProvider(
  flags: RunFlags,
  host: HostConfig,
  providerGiven: boolean,
  env: NodeJS.ProcessEnv,
): Promise<ProviderChoice> {
  const profile = chooseProfile(flags, host, providerGiven);
  if (profile) return profileProvider(flags, profile, providerGiven, env);
  if (flags.provider === 'openai') {
    if (flags.script !== undefined) throw new UsageError('run: --script applies only to --provider scripted');
    try {
      return { kind: 'openai', provider: openAiProviderFromEnv(env), profile: null };
    } catch (err) {
      if (isLibosError(err)) throw new UsageError(`run: ${firstLine(err.message)}`);
      throw err;
    }
  }
  if (flags.script === undefined)
    throw new UsageError('run: --provider scripted (the default) needs --script <file> (.json, .yaml or .yml); or use --provider openai');
  return { kind: 'scripted', script: await scriptFile(flags.script), profile: null };
}

/** A scripted provider that continues each process's turns where earlier runs on this store stopped. */
export async function scriptedProvider(rt: Runtime, script: LlmScript, model?: string): Promise<LlmProvider> {
  const pids = (await rt.processes()).map((p) => p.pid);
  const consumed = new Map<string, number>();
  for (const pid of pids) consumed.set(pid, (await rt.llmCalls({ pid, limit: 10_000 })).filter((c) => c.provider === 'scripted').length);
  return new ScriptedProvider(
    resumeScript(script, pids, (pid) => consumed.get(pid) ?? 0),
    model !== undefined ? { model } : {},
  );
}

/** One progress line: quantum number, pid, kind, stop reason, tools (`!code` marks a failed one). */
export function quantumLine(n: number, q: QuantumResult): string {
  const tools = q.executed.map((name, i) => {
    const r = q.results[i];
    return r && !r.ok ? `${name}!${r.error.code}` : name;
  });
  const skipped = q.skipped.length ? ` (skipped: ${q.skipped.join(', ')})` : '';
  const error = q.error ? ` ${q.error.code}: ${firstLine(q.error.message)}` : '';
  const stop = (q.stopReason ?? '-').padEnd(22);
  return `${`q${n}`.padEnd(5)}${q.pid}  ${q.kind.padEnd(7)}  ${stop}  ${tools.join(', ') || '-'}${skipped}${error}`;
}

/** A provider retry as one progress line (stderr): which process, which attempt of how many, the wait, the error. */
export function retryLine(e: RuntimeEvent): string {
  const d = e.data as { attempt?: number; max_attempts?: number; delay_ms?: number; error?: { code?: string; message?: string } };
  const wait = typeof d.delay_ms === 'number' ? `, retrying in ${(d.delay_ms / 1000).toFixed(1)} s` : '';
  return (
    `retry ${e.pid ?? '-'}: attempt ${d.attempt ?? '?'} of ${d.max_attempts ?? '?'} failed (${d.error?.code ?? '?'}: ` +
    `${firstLine(d.error?.message ?? '')})${wait}`
  );
}

/** The pids of `root` and every descendant. */
function subtree(all: readonly ProcessInfo[], root: string): Set<string> {
  const ids = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) if (p.parentPid && ids.has(p.parentPid) && !ids.has(p.pid)) ids.add(p.pid), (grew = true);
  }
  return ids;
}

interface Outcome {
  readonly quanta: number;
  readonly idle: boolean;
  readonly held: readonly string[];
}

/**
 * Runs only `root` and its descendants, one quantum at a time: before each, any other runnable process is paused
 * (held) by the host; afterwards every held process that is still paused is resumed.
 */
async function runSubtree(
  rt: Runtime,
  root: string,
  run: { readonly provider: LlmProvider; readonly profile: LlmProfile | null },
  maxQuanta: number | undefined,
  onQuantum: (q: QuantumResult) => void,
): Promise<Outcome> {
  const held = new Set<string>();
  let quanta = 0;
  let idle = false;
  try {
    while (maxQuanta === undefined || quanta < maxQuanta) {
      const all = await rt.processes();
      const mine = subtree(all, root);
      for (const p of all) {
        if (p.status === 'runnable' && !mine.has(p.pid)) {
          await rt.signal(p.pid, 'pause', `held by libos run --pid ${root}`);
          held.add(p.pid);
        }
      }
      const r = await rt.run({ ...run, maxQuanta: 1, onQuantum });
      quanta += r.quanta;
      if (r.quanta === 0) {
        idle = true;
        break;
      }
    }
  } finally {
    for (const pid of held) if ((await rt.process(pid)).status === 'paused') await rt.signal(pid, 'resume');
  }
  return { quanta, idle, held: [...held] };
}

function countStatuses(ps: readonly ProcessInfo[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const p of ps) counts[p.status] = (counts[p.status] ?? 0) + 1;
  return counts;
}

async function runCommand(cmd: Command, kit: CommandKit, flags: RunFlags): Promise<number> {
  const o = kit.g(cmd);
  const maxQuanta = flags.maxQuanta === undefined ? undefined : parsePositiveInt(flags.maxQuanta, '--max-quanta');
  const host = hostConfigOf(o).config;
  const choice = await chooseProvider(flags, host, cmd.getOptionValueSource('provider') === 'cli', process.env);
  return withLocalRuntime(o, async (rt) => {
    if (flags.pid) await rt.process(flags.pid);
    const provider = choice.kind === 'openai' ? choice.provider : await scriptedProvider(rt, choice.script, choice.model);
    const profile = choice.profile;
    const log: Record<string, unknown>[] = [];
    const providerFailures = new Map<string, { code: string; message: string }>();
    const onQuantum = (q: QuantumResult) => {
      log.push({
        pid: q.pid,
        kind: q.kind,
        stop_reason: q.stopReason ?? null,
        executed: q.executed,
        skipped: q.skipped,
        errors: q.results.flatMap((r) => (r.ok ? [] : [r.error.code])),
        ...(q.error ? { error: q.error } : {}),
      });
      if (q.kind === 'paused' && q.error) providerFailures.set(q.pid, q.error);
      if (!o.json) process.stdout.write(`${quantumLine(log.length, q)}\n`);
    };
    // The provider's bounded retries, as they happen (durable llm_retry events): progress on stderr.
    const retries: RuntimeEvent[] = [];
    const onEvent = (e: RuntimeEvent) => {
      if (e.type !== 'llm_retry') return;
      retries.push(e);
      if (!o.json) process.stderr.write(`${retryLine(e)}\n`);
    };
    const stopWatching = rt.watch({ event: onEvent });
    let out: Outcome;
    try {
      out = flags.pid
        ? await runSubtree(rt, flags.pid, { provider, profile }, maxQuanta, onQuantum)
        : { ...(await rt.run({ provider, profile, onQuantum, ...(maxQuanta !== undefined ? { maxQuanta } : {}) })), held: [] };
    } finally {
      stopWatching();
    }
    const all = await rt.processes();
    const scope = flags.pid ? all.filter((p) => subtree(all, flags.pid!).has(p.pid)) : all;
    const statuses = countStatuses(scope);
    const failed = scope
      .filter((p) => p.status === 'failed' || p.status === 'killed')
      .map((p) => ({
        pid: p.pid,
        status: p.status,
        code: (p.outcome?.code as string | undefined) ?? null,
        message: (p.outcome?.message ?? p.outcome?.reason ?? null) as string | null,
      }));
    const pendingHuman = (await rt.humanRequests({ status: 'pending' })).filter((h) => scope.some((p) => p.pid === h.pid)).length;
    // A process the provider failed (after its retries) is paused with the error: the run exits 1 naming it.
    const stillPaused = new Set(scope.filter((p) => p.status === 'paused').map((p) => p.pid));
    const providerFailed = [...providerFailures].filter(([pid]) => stillPaused.has(pid)).map(([pid, error]) => ({ pid, ...error }));
    const report = {
      quanta: out.quanta,
      idle: out.idle,
      provider: provider.name,
      model: provider.model,
      profile: profile?.name ?? null,
      statuses,
      failed,
      pending_human_requests: pendingHuman,
      held: out.held,
      provider_failures: providerFailed,
      retries: retries.map((e) => ({ pid: e.pid, ...e.data })),
      log,
    };
    const calls = profile?.parallel_tool_calls ? 'on' : 'off';
    const ended = out.idle ? 'idle (nothing runnable)' : `budget-limited (--max-quanta ${maxQuanta} spent; work remains)`;
    const profileLine = profile ? `profile: ${profile.name} (${provider.name} ${provider.model}, parallel tool calls ${calls})` : null;
    print(o, report, () =>
      [
        `run: ${out.quanta} ${out.quanta === 1 ? 'quantum' : 'quanta'}, ${ended}`,
        ...(profileLine ? [profileLine] : []),
        `processes: ${
          Object.entries(statuses)
            .map(([s, c]) => `${s} ${c}`)
            .join(', ') || 'none'
        }`,
        ...failed.map((f) => `  ${f.pid} ${f.status}${f.code ? `: ${f.code}` : ''}${f.message ? `: ${firstLine(f.message)}` : ''}`),
        ...(pendingHuman ? [`human requests pending: ${pendingHuman} (libos human list)`] : []),
        ...(out.held.length ? [`held paused during the run and resumed: ${out.held.join(', ')}`] : []),
        ...providerFailed.map(
          (f) =>
            `provider failed: ${f.pid} paused: ${f.code}: ${firstLine(f.message)} (fix the provider, then libos resume ` +
            `${f.pid} and run again)`,
        ),
      ].join('\n'),
    );
    return providerFailed.length > 0 ? EXIT.toolError : EXIT.ok;
  });
}

/** `libos run`: the scheduler, with a scripted or an OpenAI-compatible model. */
export function registerRun(program: Command, kit: CommandKit): void {
  program
    .command('run')
    .description('run the scheduler until nothing is runnable or --max-quanta is spent; one line per quantum, then a summary')
    .option('--max-quanta <n>', 'quanta this run may spend, shared by all processes (default: until idle)')
    .addOption(
      new Option('--provider <name>', 'the model: scripted (needs --script) or openai (LIBOS_OPENAI_* / OPENAI_* env)')
        .choices(['scripted', 'openai'])
        .default('scripted'),
    )
    .option('--script <file>', 'scripted turns (.json, .yaml or .yml); a rerun continues each process where it stopped')
    .option('--pid <pid>', 'schedule only this process and its descendants (other runnable ones are held paused for the run)')
    .option('--profile <name>', 'an LLM profile of the host config (default: its default_profile unless --provider is given)')
    .action(kit.act(async (cmd: Command, flags: RunFlags) => runCommand(cmd, kit, flags)));
}
