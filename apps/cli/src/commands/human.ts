import { wire } from '@libos/kernel';
import { type Command, Option } from 'commander';
import { LibosError, type HumanRequest, type HumanRequestStatus } from '@libos/sdk';
import { print, table, UsageError } from '../output.js';
import type { CommandKit } from './kit.js';
import { withRuntime } from './with-runtime.js';

type Decision = 'always_allow' | 'always_deny' | 'ask_each_time';

interface AnswerFlags {
  readonly approve?: boolean;
  readonly reject?: boolean;
  readonly answer?: string;
  readonly decision?: Decision;
}

/**
 * Checks the flags of `human answer` that contradict each other on their own (before the store is opened):
 * exactly one of --approve / --reject; --approve never with always_deny, --reject never with always_allow.
 */
export function checkAnswerFlags(f: AnswerFlags): { approved: boolean } {
  if (Boolean(f.approve) === Boolean(f.reject)) throw new UsageError('human answer: give exactly one of --approve or --reject');
  if (f.approve && f.decision === 'always_deny') throw new UsageError('human answer: --approve contradicts --decision always_deny');
  if (f.reject && f.decision === 'always_allow') throw new UsageError('human answer: --reject contradicts --decision always_allow');
  return { approved: Boolean(f.approve) };
}

/** Checks the flags against the request they answer: a question has no --decision, and approving one needs --answer. */
export function checkAnswerFits(req: HumanRequest, f: AnswerFlags, approved: boolean): void {
  if (req.kind !== 'question') return;
  if (f.decision !== undefined) throw new UsageError(`human answer: --decision applies to permission requests; ${req.id} is a question`);
  if (approved && (f.answer === undefined || f.answer.trim() === ''))
    throw new UsageError(`human answer: --approve of a question needs --answer <text> (${req.id} asks: ${req.prompt.split('\n')[0]})`);
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const responseText = (r: HumanRequest) => {
  if (!r.response) return null;
  const parts = [
    typeof r.response.answer === 'string' ? JSON.stringify(r.response.answer) : null,
    typeof r.response.decision === 'string' ? r.response.decision : null,
  ].filter(Boolean);
  return parts.join(' ') || null;
};

/** `libos human list|answer`: the durable human request queue (questions and permission requests). */
export function registerHuman(program: Command, kit: CommandKit): void {
  const human = program
    .command('human')
    .description('the human request queue: questions (ask_human) and permission requests (request_permission)');

  human
    .command('list')
    .description('list human requests, oldest first')
    .addOption(
      new Option('--status <status>', 'only requests with this status')
        .choices(['pending', 'approved', 'rejected', 'cancelled', 'all'])
        .default('pending'),
    )
    .option('--pid <pid>', 'only requests of this process')
    .action(
      kit.act(async (cmd: Command, f: { status: HumanRequestStatus | 'all'; pid?: string }) => {
        const o = kit.g(cmd);
        await withRuntime(o, async (rt) => {
          const rows = await rt.humanRequests({ ...(f.status !== 'all' ? { status: f.status } : {}), ...(f.pid ? { pid: f.pid } : {}) });
          print(o, rows.map(wire.humanRequestToWire), () =>
            table(
              rows.map((r) => ({
                id: r.id,
                pid: r.pid,
                kind: r.kind,
                status: r.status,
                request: clip(
                  r.kind === 'permission'
                    ? `${(r.details.rights as string[] | undefined)?.join(',') ?? '?'} on ${String(r.details.resource ?? '?')}: ${r.prompt}`
                    : r.prompt,
                  70,
                ),
                response: responseText(r),
              })),
              ['id', 'pid', 'kind', 'status', 'request', 'response'],
            ),
          );
        });
      }),
    );

  human
    .command('answer <requestId>')
    .description('answer a pending request: --approve or --reject; a question needs --answer to be approved; a permission takes --decision')
    .option('--approve', 'approve: answer the question, or grant the permission')
    .option('--reject', 'reject: the waiting tool call fails (request_permission returns rejected)')
    .option('--answer <text>', 'the answer text (required to approve a question)')
    .addOption(
      new Option(
        '--decision <decision>',
        'a permission decision (default: ask_each_time for a per-use request; always_allow on --approve, always_deny ' +
          'on --reject for a standing one)',
      ).choices(['always_allow', 'always_deny', 'ask_each_time']),
    )
    .action(
      kit.act(async (cmd: Command, id: string, f: AnswerFlags) => {
        const o = kit.g(cmd);
        const { approved } = checkAnswerFlags(f);
        await withRuntime(o, async (rt) => {
          const req = (await rt.humanRequests({})).find((r) => r.id === id);
          if (!req) throw new LibosError('human_request_not_found', `human request ${id} does not exist (libos human list --status all)`);
          checkAnswerFits(req, f, approved);
          const settled = await rt.answerHuman(id, {
            approved,
            responder: 'human:owner',
            ...(f.answer !== undefined ? { answer: f.answer } : {}),
            ...(f.decision ? { decision: f.decision } : {}),
          });
          const p = await rt.process(settled.pid);
          print(
            o,
            { request: settled, process: { pid: p.pid, status: p.status } },
            () =>
              `${settled.id} ${settled.status}${responseText(settled) ? ` (${responseText(settled)})` : ''}; ${p.pid} ` +
              `is ${p.status}${p.status === 'runnable' ? ' (libos run continues it)' : ''}`,
          );
        });
      }),
    );
  human
    .command('cancel <requestId>')
    .description(
      'cancel a pending request nobody will answer; the waiting tool call resumes and fails (request_permission reports cancelled)',
    )
    .option('--reason <text>', 'why', 'cancelled by the host')
    .action(
      kit.act(async (cmd: Command, id: string, f: { reason: string }) => {
        const o = kit.g(cmd);
        await withRuntime(o, async (rt) => {
          const settled = await rt.cancelHumanRequest(id, f.reason);
          const p = await rt.process(settled.pid);
          print(
            o,
            { request: settled, process: { pid: p.pid, status: p.status } },
            () => `${settled.id} cancelled; ${p.pid} is ${p.status}`,
          );
        });
      }),
    );
}
