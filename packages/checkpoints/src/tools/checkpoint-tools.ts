import { defineTool, z, type ToolContext } from '@libos/sdk';
import { CHECKPOINTS_SERVICE, type CheckpointsService } from '../checkpoints-service.js';
import { idPattern } from '@libos/sdk';

const service = (ctx: ToolContext) => ctx.service<CheckpointsService>(CHECKPOINTS_SERVICE);
const checkpointId = z.string().regex(idPattern('ckpt')).describe('a checkpoint id (ckpt_<16 hex>)');
const pid = z.string().regex(idPattern('pid'));

/** `create_checkpoint`: captures a process subtree (default the caller's own) in one transaction. */
export const createCheckpoint = defineTool({
  name: 'create_checkpoint',
  description:
    'Capture a process subtree (default your own: you and every descendant) in one transaction: process rows, tool tables and ' +
    'Skills, namespaces, Object metadata and payloads (content-addressed), grants, budgets, mailbox, saved calls and ObjectTask ' +
    'records. Needs write on checkpoint:process:<pid>. The owner gets read on the new checkpoint, nothing more.',
  input: z.object({
    pid: pid.optional().describe('the subtree root; default your own pid'),
    label: z.string().min(1).max(200).optional().describe('a short note, e.g. "before the migration"'),
  }),
  async run(args, ctx) {
    const cp = await service(ctx).create(ctx.pid, args.pid ?? ctx.pid, args.label === undefined ? {} : { label: args.label });
    return {
      checkpoint_id: cp.checkpoint_id,
      owner_pid: cp.owner_pid,
      label: cp.label,
      captured_at: cp.captured_at,
      pids: cp.pids,
      counts: cp.counts,
      payload_bytes: cp.payload_bytes,
    };
  },
});

/** `list_checkpoints`: the checkpoints the caller may read, newest first. */
export const listCheckpoints = defineTool({
  name: 'list_checkpoints',
  description: 'List the checkpoints you may read (read on checkpoint:<id>), newest first; others are left out. Optionally of one owner.',
  input: z.object({
    owner_pid: pid.optional().describe('only checkpoints of this subtree root'),
    limit: z.int().min(0).max(1000).default(100).describe('at most this many (0..1000, default 100)'),
  }),
  async run(args, ctx) {
    const list = await service(ctx).list(ctx.pid, { limit: args.limit, ...(args.owner_pid ? { ownerPid: args.owner_pid } : {}) });
    return {
      checkpoints: list.map((c) => ({
        checkpoint_id: c.checkpoint_id,
        owner_pid: c.owner_pid,
        label: c.label,
        captured_at: c.captured_at,
        counts: c.counts,
      })),
    };
  },
});

/** `inspect_checkpoint`: what a checkpoint holds. */
export const inspectCheckpoint = defineTool({
  name: 'inspect_checkpoint',
  description:
    'Show what a checkpoint holds: its processes, Objects (with versions and payload sha256), grants and tasks. ' +
    'Needs read on checkpoint:<id>.',
  input: z.object({ checkpoint_id: checkpointId }),
  async run(args, ctx) {
    return service(ctx).inspect(ctx.pid, args.checkpoint_id);
  },
});

/** `diff_checkpoint`: what changed since a checkpoint. */
export const diffCheckpoint = defineTool({
  name: 'diff_checkpoint',
  description:
    "What changed in the checkpoint's subtree since it was captured: processes, Objects (versions), grants, tasks and messages " +
    'added, removed or changed. Needs read on checkpoint:<id>.',
  input: z.object({ checkpoint_id: checkpointId }),
  async run(args, ctx) {
    return service(ctx).diff(ctx.pid, args.checkpoint_id);
  },
});

/** `restore_checkpoint`: puts the subtree back as captured, at a safe point. */
export const restoreCheckpoint = defineTool({
  name: 'restore_checkpoint',
  description:
    "Put the checkpoint's subtree back as it was captured, in one transaction (refused while a process of it runs a quantum or " +
    'an ObjectTask of it is active). Audit, events, LLM calls and human history stay; spent finite uses are not refunded; a ' +
    'grant revoked since stays revoked. Effects outside the store (files, commands, provider calls) are listed, never undone. ' +
    'Needs admin on checkpoint:<id>.',
  input: z.object({ checkpoint_id: checkpointId }),
  exclusive: true,
  async run(args, ctx) {
    return service(ctx).restore(ctx.pid, args.checkpoint_id);
  },
});

/** `fork_checkpoint`: a new subtree from the snapshot. */
export const forkCheckpoint = defineTool({
  name: 'fork_checkpoint',
  description:
    'Start a new process tree from a checkpoint: new pids and Object ids, waits made runnable, finite-use grants dropped; it runs ' +
    "on its own and never writes the original's Objects. Needs execute on checkpoint:<id>.",
  input: z.object({ checkpoint_id: checkpointId }),
  async run(args, ctx) {
    return service(ctx).fork(ctx.pid, args.checkpoint_id);
  },
});
