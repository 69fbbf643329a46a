import type { Command } from 'commander';
import { wire } from '@libos/kernel';
import { assertJsonBounds } from '@libos/sdk';
import { print, UsageError } from '../output.js';
import type { CommandKit } from './kit.js';
import { withRuntime } from './with-runtime.js';

interface SendFlags {
  readonly from: string;
  readonly channel?: string;
  readonly kind?: string;
  readonly interrupt: boolean;
}

/** A message argument: JSON when it parses, else `{ "text": ... }`. */
export function messagePayload(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { text };
  }
}

const HUMAN_SENDER = /^human:[a-z0-9][a-z0-9._-]*$/;
const LABEL = /^[^\s]{1,64}$/;

async function send(cmd: Command, kit: CommandKit, pid: string, text: string, flags: SendFlags): Promise<void> {
  const o = kit.g(cmd);
  if (!HUMAN_SENDER.test(flags.from))
    throw new UsageError(`--from must be human:<name> (lowercase letters, digits, . _ -), got ${JSON.stringify(flags.from)}`);
  if (flags.channel !== undefined && !LABEL.test(flags.channel))
    throw new UsageError(`--channel must be 1 to 64 characters without spaces, got ${JSON.stringify(flags.channel)}`);
  if (flags.kind !== undefined && !LABEL.test(flags.kind))
    throw new UsageError(`--kind must be 1 to 64 characters without spaces, got ${JSON.stringify(flags.kind)}`);
  const payload = messagePayload(text);
  assertJsonBounds(payload, 'payload'); // before the store is opened (rt.sendMessage checks the same)
  await withRuntime(o, async (rt) => {
    const before = await rt.process(pid);
    const m = await rt.sendMessage(pid, payload, {
      from: flags.from,
      delivery: flags.interrupt ? 'interrupt' : 'normal',
      ...(flags.channel ? { channel: flags.channel } : {}),
      ...(flags.kind ? { kind: flags.kind } : {}),
    });
    const after = await rt.process(pid);
    const woke = before.status !== 'runnable' && after.status === 'runnable';
    const wakes = woke ? `; ${pid} woke (now runnable)` : '';
    print(
      o,
      { ...wire.messageToWire(m), woke },
      () => `${m.messageId} ${m.delivery} message from ${m.sender} to ${pid} on channel ${m.channel}${wakes}`,
    );
  });
}

/** `libos send`: a human posts a message to a process's mailbox. */
export function registerSend(program: Command, kit: CommandKit): void {
  program
    .command('send <pid> <message>')
    .description('post a message to a process as a human (JSON, or text that becomes {"text": ...}); wakes it if it waits for one like it')
    .option('--from <sender>', 'the sender, human:<name>', 'human:owner')
    .option('--channel <channel>', 'channel (default "default")')
    .option('--kind <kind>', 'message kind (default "message")')
    .option('--interrupt', 'interrupt delivery: its next non-message tool call stops until it reads', false)
    .action(kit.act(async (cmd: Command, pid: string, text: string, flags: SendFlags) => send(cmd, kit, pid, text, flags)));
}
