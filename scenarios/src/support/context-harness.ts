import { capabilities } from '@libos/capabilities';
import {
  openRuntime,
  type HostConfigInput,
  type LlmProvider,
  type LlmRequest,
  type LlmResponse,
  type LlmToolCall,
  type Runtime,
  type ScriptedRequestRecord,
} from '@libos/kernel';
import { objectMemory, type ObjectMemoryOptions } from '@libos/object-memory';
import {
  definePlugin,
  defineTool,
  SERVICE_NAMES,
  sequentialIds,
  skillFromText,
  z,
  type ContextManagement,
  type LlmContextService,
  type ObjectsService,
  type Plugin,
} from '@libos/sdk';
import { session, type SessionOptions } from '@libos/session';

/**
 * Shared harness of the LLM context and compaction scenarios: a real runtime (SQLite in memory or a file) with the
 * capability, Object Memory and session plugins, and a `ctx-notes` plugin whose `note_touch` tool emits one event and
 * returns a payload of a chosen size (so a scripted agent can grow its context at will).
 */

export const NOTES_SKILL = 'ctx-notes';
/** An image_only agent: its whole user message is its LLM context Object. */
export const CTX_AGENT = 'ctx-agent:v0';
export const CTX_AGENT_PROMPT = 'You are a context test agent. Answer with tool calls only.';
/** A libos_default agent whose maintenance mode is `prompt` (a notice from 10% of the window). */
export const TALK_AGENT = 'ctx-talk:v0';
export const PRESSURE_NOTICE = 'PRESSURE NOTICE: the context is filling up.';
/** An image whose table holds the four runtime-session tools but which loads no Skill at spawn. */
export const BARE_AGENT = 'ctx-bare:v0';
export const CTX_AGENT_TOOLS = ['process_exit', 'compact_process_context', 'get_current_time', 'note_touch'];

const NOTES_SKILL_MD = `---
name: ${NOTES_SKILL}
description: A note tool for context tests; each call leaves an event and a result of the size asked for.
allowed-tools: note_touch
---
Call note_touch with a label (and optionally a size in characters).
`;

export interface ContextHarnessOptions {
  readonly path?: string;
  readonly hostConfig?: HostConfigInput;
  readonly idStart?: number;
  /** Context maintenance of CTX_AGENT (default: the image's default, auto_compact at 0.8). */
  readonly contextManagement?: ContextManagement;
  readonly plugins?: readonly Plugin[];
  readonly sessionOptions?: SessionOptions;
  /** Options of the Object Memory plugin (e.g. a wrapping `payloadStore` that fails chosen writes). */
  readonly objectMemory?: ObjectMemoryOptions;
}

/** The `ctx-notes` plugin and the CTX_AGENT image. */
export function notesPlugin(contextManagement?: ContextManagement): Plugin {
  const touch = defineTool({
    name: 'note_touch',
    description: 'Record a note; returns the label and `size` characters of text.',
    input: z.object({ label: z.string().min(1).max(64), size: z.number().int().min(0).max(50_000).default(0) }),
    async run({ label, size }, ctx) {
      await ctx.events.emit('note_touched', { pid: ctx.pid, label });
      return { label, text: 'n'.repeat(size) };
    },
  });
  return definePlugin({
    name: 'ctx-notes',
    version: '0.0.0',
    skills: [skillFromText(NOTES_SKILL_MD, NOTES_SKILL)],
    tools: [touch],
    images: [
      {
        id: CTX_AGENT,
        description: 'image_only context test agent.',
        systemPrompt: CTX_AGENT_PROMPT,
        promptMode: 'image_only',
        defaultSkills: ['agent-libos-runtime-session', NOTES_SKILL],
        defaultTools: CTX_AGENT_TOOLS,
        ...(contextManagement ? { contextManagement } : {}),
      },
      {
        id: TALK_AGENT,
        description: 'libos_default agent whose context maintenance is a pressure notice (from a tenth of the window).',
        systemPrompt: 'You are a talkative test agent.',
        promptMode: 'libos_default',
        defaultSkills: ['agent-libos-runtime-session', NOTES_SKILL],
        defaultTools: CTX_AGENT_TOOLS,
        contextManagement: { mode: 'prompt', thresholdRatio: 0.1, prompt: PRESSURE_NOTICE },
      },
      {
        id: BARE_AGENT,
        description: 'The runtime-session tools in its table, no Skill loaded at spawn.',
        systemPrompt: 'You are a bare test agent.',
        promptMode: 'libos_default',
        defaultSkills: [],
        defaultTools: ['process_exit', 'compact_process_context', 'get_current_time', 'sleep'],
      },
    ],
  });
}

/** Opens a runtime with capabilities, Object Memory, session and `ctx-notes`, and sequential ids. */
export async function openContextRuntime(opts: ContextHarnessOptions = {}): Promise<Runtime> {
  return openRuntime({
    path: opts.path ?? ':memory:',
    plugins: [
      capabilities(),
      objectMemory(opts.objectMemory),
      session(opts.sessionOptions),
      notesPlugin(opts.contextManagement),
      ...(opts.plugins ?? []),
    ],
    config: { ids: sequentialIds(opts.idStart ?? 0) },
    ...(opts.hostConfig ? { hostConfig: opts.hostConfig } : {}),
  });
}

/** A process's LLM context as the kernel holds it: durable state, and the Object (null when it has none or lost it). */
export interface ContextSnapshot {
  readonly oid: string | null;
  readonly generation: string | null;
  readonly labels: Record<string, unknown>;
  readonly version: number | null;
  readonly payload: { entries: Record<string, unknown>[]; [key: string]: unknown } | null;
  readonly tags: readonly string[];
}

export async function contextOf(rt: Runtime, pid: string): Promise<ContextSnapshot> {
  return rt.transaction(async (scope) => {
    const state = await scope.service<LlmContextService>(SERVICE_NAMES.llmContext).state(pid);
    const objects = scope.service<ObjectsService & { inspect(oid: string): Promise<{ metadata: { tags: string[] } } | null> }>(
      SERVICE_NAMES.objects,
    );
    const d = state.oid ? await objects.describe(state.oid) : null;
    const payload = d?.payloadAvailable ? ((await objects.readPayload(d.oid)) as ContextSnapshot['payload']) : null;
    const tags = d ? ((await objects.inspect(d.oid))?.metadata.tags ?? []) : [];
    return { oid: state.oid, generation: state.generation, labels: { ...state.labels }, version: d?.version ?? null, payload, tags };
  });
}

/** The heading line of a context render (a Skill's text may name the literal inline; only the line is the heading). */
export const HEADING_LINE = /(^|\n)LLM context object:\n/;

/** The LLM context section of a recorded prompt (from its heading line to the end), or null when it has none. */
export function contextText(req: ScriptedRequestRecord): string | null {
  const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
  const m = HEADING_LINE.exec(user);
  return m === null ? null : user.slice(m.index + m[1]!.length);
}

/** Entry kinds of a context payload, in order. */
export const kinds = (payload: ContextSnapshot['payload']): string[] => (payload?.entries ?? []).map((e) => String(e.kind));

/** A valid ten-key summary (only `goal` and `completed` say something). */
export function summaryOf(goal: string, completed: readonly string[] = []): Record<string, unknown> {
  return {
    goal,
    constraints: [],
    user_preferences: [],
    completed: [...completed],
    pending: [],
    key_references: [],
    recent_decisions: [],
    risks: [],
    uncertainties: [],
    next_steps: [],
  };
}

/** The stage goal a compressor was given (its `context_compaction_stage:<pid>` Object), or null. */
export async function stageGoalOf(rt: Runtime, childPid: string): Promise<Record<string, unknown> | null> {
  return rt.transaction(async (scope) => {
    const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
    const ref = await objects.lookup(`process:${childPid}`, `context_compaction_stage:${childPid}`);
    const d = ref ? await objects.describe(ref.oid) : null;
    return d?.payloadAvailable ? ((await objects.readPayload(d.oid)) as Record<string, unknown>) : null;
  });
}

/** The job Object of a caller (`context_compaction_job:<pid>`), or null. */
export async function jobOf(rt: Runtime, pid: string): Promise<Record<string, unknown> | null> {
  return rt.transaction(async (scope) => {
    const objects = scope.service<ObjectsService>(SERVICE_NAMES.objects);
    const ref = await objects.lookup(`process:${pid}`, `context_compaction_job:${pid}`);
    const d = ref ? await objects.describe(ref.oid) : null;
    return d?.payloadAvailable ? ((await objects.readPayload(d.oid)) as Record<string, unknown>) : null;
  });
}

/**
 * A provider that plays every `context-compressor:v0` child from its stage goal (`summarize(stage)` is its exit
 * payload; throwing there makes the child reply with no call) and hands every other process to `inner`.
 */
export class CompressorProvider implements LlmProvider {
  readonly name = 'scripted';
  /** The inner provider's model (context maintenance picks its tokenizer by it). */
  get model(): string {
    return this.inner.model;
  }
  /** Every stage goal a compressor saw, in order. */
  readonly stages: Record<string, unknown>[] = [];
  constructor(
    private readonly rt: Runtime,
    private readonly inner: LlmProvider,
    private readonly summarize: (stage: Record<string, unknown>) => unknown = (s) =>
      summaryOf(`stage ${String(s.stage_index)}`, [`stage ${String(s.stage_index)}`]),
  ) {}

  async completeAction(req: LlmRequest): Promise<LlmResponse> {
    if (req.imageId !== 'context-compressor:v0') return this.inner.completeAction(req);
    const stage = await stageGoalOf(this.rt, req.pid!);
    if (!stage) throw new Error(`compressor ${req.pid} has no stage goal`);
    this.stages.push(stage);
    const call = { id: `cmp_${this.stages.length}`, name: 'process_exit', arguments: { payload: this.summarize(stage) } };
    return {
      content: null,
      toolCalls: [call as LlmToolCall],
      api: 'scripted',
      model: 'scripted',
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    };
  }
}
