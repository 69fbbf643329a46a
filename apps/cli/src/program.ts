import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { createRequire } from 'node:module';
import { Command, CommanderError, Option } from 'commander';
import { wire, type ProcessInfo } from '@libos/kernel';
import { LibosError } from '@libos/sdk';
import { setCommandLinePlugins } from './compose.js';
import { runDemo } from './demo.js';
import { registerCheckpoint } from './commands/checkpoint.js';
import { registerConfig } from './commands/config.js';
import { registerCode } from './commands/code.js';
import { registerEvents } from './commands/events.js';
import { registerHuman } from './commands/human.js';
import { registerLlmCalls } from './commands/llm-calls.js';
import { registerMcp } from './commands/mcp.js';
import { registerObjects } from './commands/objects.js';
import { registerServe } from './commands/serve.js';
import { registerRun } from './commands/run.js';
import { registerSend } from './commands/send.js';
import { registerSignals } from './commands/signal.js';
import { parseExpiryFlag, parseJsonObject, parsePositiveInt, parseRights } from './commands/parse.js';
import { validatePluginDir } from './commands/skills-validate.js';
import { registerPlugins } from './commands/plugins.js';
import { assertStoreFor } from './commands/store-guard.js';
import type { Act, CommandKit } from './commands/kit.js';
import { withRuntime, type GlobalOptions } from './commands/with-runtime.js';
import { EXIT, print, printError, table, UsageError } from './output.js';

export const DEFAULT_DB = './.libos/libos.db';

/** This CLI's version (its package.json, beside dist/ in the installed package). */
export const VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

const processRow = (p: ProcessInfo) => ({
  pid: p.pid,
  parent: p.parentPid,
  image: p.imageId,
  status: p.status,
  goal: p.goal.length > 48 ? `${p.goal.slice(0, 47)}…` : p.goal,
});

/** Builds the `libos` command. `setExit` receives the exit code of the action that ran. */
export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('libos')
    .description('libOS: an operating system for LLM agents')
    .addOption(
      new Option('--db <path>', 'store file (":memory:" for an ephemeral store) or postgres:// URL (?schema=name)')
        .env('LIBOS_DB_URL')
        .default(DEFAULT_DB),
    )
    .addOption(
      new Option('--host-id <id>', 'open the postgres:// store as this host of many: it runs the process trees it leases (see README)').env(
        'LIBOS_HOST_ID',
      ),
    )
    .option('--json', 'machine-readable output', false)
    .option('--config <path>', 'host config file (.json, .yaml, .yml); default: libos.config.json|yaml next to the store')
    .option(
      '--plugin <spec>',
      'load a plugin: a package name or a path, from the working folder (repeatable)',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .version(VERSION, '-V, --version', 'print the libos version')
    .showHelpAfterError(false)
    .exitOverride();

  const g = (cmd: Command): GlobalOptions => cmd.optsWithGlobals() as GlobalOptions;
  /** Wraps an action: prints errors as one line and sets the stable exit code. */
  // Commander calls an action with (...positionals, options, command); actions here take the command first.
  const act: Act =
    // biome-ignore lint/suspicious/noConfusingVoidType: an action returns an exit code or nothing at all.
      <A extends unknown[]>(fn: (cmd: Command, ...args: A) => Promise<number | void>) =>
      async (...raw: unknown[]) => {
        const cmd = raw[raw.length - 1] as Command;
        try {
          const o = cmd.optsWithGlobals() as GlobalOptions & { plugin?: string[]; hostId?: string };
          setCommandLinePlugins({
            specs: o.plugin ?? [],
            ...(o.config !== undefined ? { configPath: o.config } : {}),
            ...(o.hostId ? { hostId: o.hostId } : {}), // an empty LIBOS_HOST_ID is none
            cwd: process.cwd(),
          });
          assertStoreFor(cmd, o.db);
          setExit((await fn(cmd, ...(raw.slice(0, -1) as A))) ?? EXIT.ok);
        } catch (err) {
          setExit(printError(g(cmd), err));
        }
      };
  const kit: CommandKit = { act, g };

  program
    .command('init')
    .description('create (or check) the store')
    .action(
      act(async (cmd: Command) => {
        const o = g(cmd);
        await withRuntime(o, async (rt) =>
          print(
            o,
            { db: rt.location, processes: (await rt.processes()).length, skills: rt.skillCatalog().length },
            () => `store ready: ${rt.location}`,
          ),
        );
      }),
    );

  program
    .command('spawn')
    .description('spawn a root process from a registered image')
    .option('--image <id>', 'image id', 'base-agent:v0')
    .requiredOption('--goal <text>', 'the goal')
    .option('--tool-calls <n>', 'tool-call budget (default 256)')
    .option('--cwd <dir>', 'working directory of the process (an existing directory; default: where libos runs)')
    .action(
      act(async (cmd: Command, opts: { image: string; goal: string; toolCalls?: string; cwd?: string }) => {
        const o = g(cmd);
        const budget = opts.toolCalls ? { tool_calls: parsePositiveInt(opts.toolCalls, '--tool-calls') } : undefined;
        const cwd = opts.cwd === undefined ? undefined : resolve(opts.cwd);
        if (cwd !== undefined && !statSync(cwd, { throwIfNoEntry: false })?.isDirectory())
          throw new UsageError(`spawn: --cwd ${cwd} is not a directory`);
        await withRuntime(o, async (rt) => {
          const p = await rt.spawn({
            image: opts.image,
            goal: opts.goal,
            ...(budget ? { budget } : {}),
            ...(cwd ? { workingDirectory: cwd } : {}),
          });
          print(o, wire.processToWire(p), () => p.pid);
        });
      }),
    );

  registerRun(program, kit);

  program
    .command('ps')
    .description('list processes')
    .action(
      act(async (cmd: Command) => {
        const o = g(cmd);
        await withRuntime(o, async (rt) => {
          const ps = await rt.processes();
          print(o, ps.map(wire.processToWire), () => table(ps.map(processRow), ['pid', 'parent', 'image', 'status', 'goal']));
        });
      }),
    );

  program
    .command('show <pid>')
    .description('show one process: state, tool tables, budget')
    .action(
      act(async (cmd: Command, pid: string) => {
        const o = g(cmd);
        await withRuntime(o, async (rt) => {
          const p = await rt.process(pid);
          const budget = await rt.budget(pid);
          print(o, wire.processDetailToWire(p, budget), () =>
            [
              `pid:      ${p.pid}`,
              `parent:   ${p.parentPid ?? '-'}`,
              `image:    ${p.imageId}`,
              `status:   ${p.status} (generation ${p.stateGeneration})`,
              `goal:     ${p.goal}`,
              `skills:   ${Object.keys(p.loadedSkills).join(', ') || '-'}`,
              `visible:  ${p.visibleTools.join(', ') || '-'}`,
              `callable: ${p.toolTable.join(', ') || '-'}`,
              `budget:   ${
                Object.entries(budget.usage)
                  .map(([k, v]) => `${k} ${v}/${budget.limits[k as keyof typeof budget.limits] ?? '∞'}`)
                  .join(', ') || '-'
              }`,
            ].join('\n'),
          );
        });
      }),
    );

  program
    .command('call <pid> <tool> [json]')
    .description('call one tool as a process, through the broker; prints the result envelope (exit 1 if it failed)')
    .action(
      act(async (cmd: Command, pid: string, tool: string, json: string | undefined) => {
        const o = g(cmd);
        const args = parseJsonObject(json ?? '{}', 'arguments');
        return withRuntime(o, async (rt) => {
          if (!rt.hasTool(tool))
            throw new LibosError('tool_not_found', `no tool named ${JSON.stringify(tool)} is registered (libos skills lists the catalog)`);
          await rt.process(pid);
          const r = await rt.call(pid, tool, args);
          process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
          return r.ok ? EXIT.ok : EXIT.toolError;
        });
      }),
    );

  registerSend(program, kit);

  program
    .command('grant <pid> <resource> <rights>')
    .description('issue a grant to a process as the host (rights: comma list)')
    .option('--uses <n>', 'finite uses')
    .option('--expires <iso>', 'expiry (ISO 8601; no offset = UTC)')
    .addOption(new Option('--effect <effect>', 'allow, deny or ask').choices(['allow', 'deny', 'ask']).default('allow'))
    .option('--delegable', 'the holder may delegate it to its children', false)
    .action(
      act(
        async (
          cmd: Command,
          pid: string,
          resource: string,
          rights: string,
          opts: { uses?: string; expires?: string; effect: 'allow' | 'deny' | 'ask'; delegable: boolean },
        ) => {
          const o = g(cmd);
          const parsed = parseRights(rights);
          const uses = opts.uses === undefined ? undefined : parsePositiveInt(opts.uses, '--uses');
          const expiresAt = opts.expires === undefined ? undefined : parseExpiryFlag(opts.expires, '--expires');
          await withRuntime(o, async (rt) => {
            const cap = await rt.grant(pid, resource, parsed, {
              effect: opts.effect,
              delegable: opts.delegable,
              ...(uses !== undefined ? { uses } : {}),
              ...(expiresAt !== undefined ? { expiresAt } : {}),
            });
            const usesLeft = cap.usesRemaining !== null ? ` (${cap.usesRemaining} uses)` : '';
            print(
              o,
              wire.capabilityToWire(cap),
              () => `${cap.id} ${cap.effect} ${cap.rights.join(',')} on ${cap.resource} to ${cap.subject}${usesLeft}`,
            );
          });
        },
      ),
    );

  program
    .command('revoke <capId>')
    .description('revoke a grant as the host')
    .action(
      act(async (cmd: Command, capId: string) => {
        const o = g(cmd);
        await withRuntime(o, async (rt) => {
          await rt.revoke(capId);
          print(o, { revoked: capId }, () => `revoked ${capId}`);
        });
      }),
    );

  program
    .command('caps <pid>')
    .description("list a process's grants")
    .option('--all', 'include revoked, expired and exhausted grants', false)
    .action(
      act(async (cmd: Command, pid: string, opts: { all: boolean }) => {
        const o = g(cmd);
        await withRuntime(o, async (rt) => {
          const caps = await rt.capabilities(pid, { includeInactive: opts.all });
          print(o, caps.map(wire.capabilityToWire), () =>
            table(
              caps.map((c) => ({
                id: c.id,
                effect: c.effect,
                rights: c.rights.join(','),
                resource: c.resource,
                uses: c.usesRemaining,
                expires: c.expiresAt,
                status: c.status,
              })),
              ['id', 'effect', 'rights', 'resource', 'uses', 'expires', 'status'],
            ),
          );
        });
      }),
    );

  registerHuman(program, kit);

  const skills = program
    .command('skills')
    .description('the Skill catalog')
    .action(
      act(async (cmd: Command) => {
        const o = g(cmd);
        await withRuntime(o, async (rt) => {
          const cat = rt.skillCatalog();
          print(o, cat.map(wire.skillToWire), () =>
            table(
              cat.map((s) => ({
                skill: s.skillId,
                plugin: s.plugin,
                tools: s.tools.join(' '),
                description: s.description.length > 60 ? `${s.description.slice(0, 59)}…` : s.description,
              })),
              ['skill', 'plugin', 'tools', 'description'],
            ),
          );
        });
      }),
    );
  skills
    .command('validate <dir>')
    .description('check a third-party plugin folder and print each problem')
    .action(
      act(async (cmd: Command, dir: string) => {
        const o = g(cmd);
        const report = await validatePluginDir(dir);
        print(o, report, () =>
          report.problems.length === 0
            ? `ok: ${report.skills.length} skill(s) valid${report.plugin ? `; plugin ${report.plugin} loads` : ''}: ` +
              `${report.skills.join(', ')}`
            : report.problems.map((p) => `${p.file}: ${p.field}: ${p.message}`).join('\n'),
        );
        return report.problems.length === 0 ? EXIT.ok : EXIT.toolError;
      }),
    );

  program
    .command('audit')
    .description('the audit trail, oldest first')
    .option('--pid <pid>', 'only this actor')
    .option('--action <action>', 'only this action, e.g. tool.call')
    .option('--limit <n>', 'at most n rows', '100')
    .action(
      act(async (cmd: Command, opts: { pid?: string; action?: string; limit: string }) => {
        const o = g(cmd);
        const limit = parsePositiveInt(opts.limit, '--limit');
        await withRuntime(o, async (rt) => {
          const rows = await rt.audit({ limit, ...(opts.pid ? { pid: opts.pid } : {}), ...(opts.action ? { action: opts.action } : {}) });
          print(o, rows.map(wire.auditToWire), () =>
            table(
              rows.map((r) => ({ seq: r.seq, ts: r.ts, actor: r.actor, action: r.action, target: r.target, decision: r.decision })),
              ['seq', 'ts', 'actor', 'action', 'target', 'decision'],
            ),
          );
        });
      }),
    );

  registerCheckpoint(program, kit);
  registerConfig(program, kit);
  registerCode(program, kit);
  registerEvents(program, kit);
  registerLlmCalls(program, kit);
  registerObjects(program, kit);
  registerPlugins(program, kit);
  registerServe(program, kit);
  registerMcp(program, kit);
  registerSignals(program, kit);

  program
    .command('demo')
    .description(
      'the scripted story (a parent, a worker, a human question, messages both ways, both exit) on a fresh SQLite store; no model needed',
    )
    .action(
      act(async (cmd: Command) => {
        const o = cmd.optsWithGlobals() as { db: string; json: boolean };
        return runDemo({ db: o.db === DEFAULT_DB ? undefined : o.db, json: o.json });
      }),
    );

  return program;
}

/** Runs the command line; resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram((c) => (code = c));
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (err instanceof UsageError) return printError({ json: false }, err);
    throw err;
  }
  return code;
}
