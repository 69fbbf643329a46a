import type { Command } from 'commander';
import type { CheckpointsService } from '@libos/checkpoints';
import { isId } from '@libos/sdk';
import { EXIT, print, table, UsageError } from '../output.js';
import type { CommandKit } from './kit.js';
import { parsePositiveInt } from './parse.js';
import { withLocalRuntime, withRuntime } from './with-runtime.js';

/** The tool each subcommand mirrors, and how its arguments map. */
type Op = 'create' | 'list' | 'inspect' | 'diff' | 'restore' | 'fork';
const TOOL: Record<Op, string> = {
  create: 'create_checkpoint',
  list: 'list_checkpoints',
  inspect: 'inspect_checkpoint',
  diff: 'diff_checkpoint',
  restore: 'restore_checkpoint',
  fork: 'fork_checkpoint',
};

function checkId(id: string): string {
  if (!isId(id, 'ckpt')) throw new UsageError(`checkpoint id must look like ckpt_<16 hex> (got ${JSON.stringify(id)})`);
  return id;
}

function checkPid(pid: string, flag: string): string {
  if (!isId(pid, 'pid')) throw new UsageError(`${flag} must look like pid_<16 hex> (got ${JSON.stringify(pid)})`);
  return pid;
}

/** What each answer looks like as text. */
function render(op: Op, v: Record<string, any>): string {
  switch (op) {
    case 'create':
      return (
        `${v.checkpoint_id}  owner ${v.owner_pid}  ${v.pids.length} process(es), ${v.counts.objects} Object(s), ` +
        `${v.counts.payloads} payload(s), ${v.payload_bytes} bytes`
      );
    case 'list':
      return table(
        (v.checkpoints as Record<string, any>[]).map((c) => ({
          checkpoint: c.checkpoint_id,
          owner: c.owner_pid,
          label: c.label,
          captured_at: c.captured_at,
          processes: c.counts.processes,
          objects: c.counts.objects,
        })),
        ['checkpoint', 'owner', 'label', 'captured_at', 'processes', 'objects'],
      );
    case 'inspect': {
      const lines = [`${v.checkpoint_id}  owner ${v.owner_pid}  captured ${v.captured_at}${v.label ? `  "${v.label}"` : ''}`];
      for (const [kind, items] of Object.entries(v.items as Record<string, Record<string, unknown>[]>)) {
        lines.push('', `${kind} (${v.counts[kind] ?? items.length})`);
        for (const i of items) lines.push(`  ${i.id}  ${JSON.stringify({ ...i, id: undefined })}`);
      }
      return lines.join('\n');
    }
    case 'diff': {
      const lines = [`since ${v.captured_at} (${v.checkpoint_id}):`];
      for (const [kind, d] of Object.entries(v.changes as Record<string, any>)) {
        if (d.counts.added + d.counts.removed + d.counts.changed === 0) continue;
        lines.push(`${kind}: +${d.counts.added} -${d.counts.removed} ~${d.counts.changed}`);
        for (const a of d.added) lines.push(`  + ${a.id}  ${a.name ?? a.status ?? a.resource ?? ''}`);
        for (const r of d.removed) lines.push(`  - ${r.id}  ${r.name ?? r.status ?? r.resource ?? ''}`);
        for (const c of d.changed) lines.push(`  ~ ${c.id}  ${JSON.stringify(c.from)} -> ${JSON.stringify(c.to)}`);
      }
      return lines.length === 1 ? `${lines[0]} nothing changed` : lines.join('\n');
    }
    case 'restore': {
      const k = (v.report.kernel ?? {}) as Record<string, any>;
      const o = (v.report.objects ?? {}) as Record<string, any>;
      const t = (v.report.tasks ?? {}) as Record<string, any>;
      const effects = (k.external_effects ?? []) as Record<string, any>[];
      return [
        `restored ${v.checkpoint_id} (${v.restore_id})`,
        `processes: ${(k.restored_pids ?? []).length} restored, ${(k.ended_pids ?? []).length} ended`,
        `objects: ${o.restored_objects ?? 0} restored, ${(o.rehydrated_payloads ?? []).length} payloads rehydrated, ` +
          `${(o.released_objects ?? []).length} released`,
        `tasks superseded: ${(t.superseded_tasks ?? []).length}; ` +
          `grants revoked: ${(v.report.capabilities?.revoked_grants ?? []).length}`,
        effects.length
          ? `not undone (effects outside the store): ${effects.map((e) => `${e.tool} by ${e.pid}`).join(', ')}`
          : 'no effects outside the store since the capture',
      ].join('\n');
    }
    case 'fork':
      return `forked ${v.checkpoint_id} as ${v.root_pid}\n${Object.entries(v.pids as Record<string, string>)
        .map(([a, b]) => `  ${a} -> ${b}`)
        .join('\n')}`;
  }
}

/**
 * `libos checkpoint create|list|inspect|diff|restore|fork`: the checkpoint tools. By default the host acts (the admin
 * actor: no grant is checked); `--actor-pid P` makes the call as process P through the ToolBroker, with P's grants.
 * Payloads are runtime-local: a command captures only the payloads its own runtime holds (none of an earlier command's),
 * and what a restore rehydrates lives until the command ends; one runtime (`libos serve`, `run`, the API) keeps them.
 */
export function registerCheckpoint(program: Command, kit: CommandKit): void {
  const cp = program
    .command('checkpoint')
    .description('capture, inspect, diff, restore or fork a process subtree (host unless --actor-pid)');

  const run = async (cmd: Command, op: Op, hostArgs: (cps: CheckpointsService) => Promise<unknown>, toolArgs: Record<string, unknown>) => {
    const o = kit.g(cmd);
    const actor = (cmd.optsWithGlobals() as { actorPid?: string }).actorPid;
    if (actor !== undefined) {
      const pid = checkPid(actor, '--actor-pid');
      return withRuntime(o, async (rt) => {
        await rt.process(pid);
        const r = await rt.call(pid, TOOL[op], toolArgs);
        if (!r.ok) {
          process.stderr.write(
            o.json ? `${JSON.stringify({ schema_version: 1, error: r.error })}\n` : `libos: ${r.error.code}: ${r.error.message}\n`,
          );
          return EXIT.toolError;
        }
        print(o, r.payload, () => render(op, r.payload as Record<string, any>));
        return EXIT.ok;
      });
    }
    return withLocalRuntime(o, async (rt) => {
      const v = await rt.transaction((scope) => hostArgs(scope.service<CheckpointsService>('checkpoints')));
      const value = op === 'list' ? { checkpoints: v } : v;
      print(o, value, () => render(op, value as Record<string, any>));
      return EXIT.ok;
    });
  };
  const actorOption = (c: Command) => c.option('--actor-pid <pid>', 'act as this process (its grants apply) instead of the host');

  actorOption(cp.command('create <pid>').description('capture <pid> and its descendants').option('--label <text>', 'a short note')).action(
    kit.act(async (cmd: Command, pid: string) => {
      const label = (cmd.opts() as { label?: string }).label;
      checkPid(pid, 'pid');
      return run(cmd, 'create', (cps) => cps.create('host', pid, label === undefined ? {} : { label }), {
        pid,
        ...(label === undefined ? {} : { label }),
      });
    }),
  );
  actorOption(
    cp
      .command('list')
      .description('checkpoints, newest first (only readable ones with --actor-pid)')
      .option('--owner <pid>', 'only of this subtree root')
      .option('--limit <n>', 'at most n', '100'),
  ).action(
    kit.act(async (cmd: Command) => {
      const f = cmd.opts() as { owner?: string; limit: string };
      const limit = parsePositiveInt(f.limit, '--limit');
      const owner = f.owner === undefined ? undefined : checkPid(f.owner, '--owner');
      return run(cmd, 'list', (cps) => cps.list('host', { limit, ...(owner ? { ownerPid: owner } : {}) }), {
        limit,
        ...(owner ? { owner_pid: owner } : {}),
      });
    }),
  );
  for (const op of ['inspect', 'diff', 'restore', 'fork'] as const) {
    const what = {
      inspect: 'what a checkpoint holds',
      diff: 'what changed since a checkpoint',
      restore: 'put the subtree back as captured (effects outside the store are listed, not undone)',
      fork: 'start a new process tree from a checkpoint',
    }[op];
    actorOption(cp.command(`${op} <checkpoint_id>`).description(what)).action(
      kit.act(async (cmd: Command, id: string) => {
        const cid = checkId(id);
        return run(cmd, op, (cps) => cps[op]('host', cid), { checkpoint_id: cid });
      }),
    );
  }
}
