import { capabilities } from '@libos/capabilities';
import { openRuntime, type HostConfigInput, type Runtime, type ScriptedRequestRecord } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
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
import { session } from '@libos/session';

/**
 * Shared harness of the LLM context and compaction scenarios: a real runtime (SQLite in memory or a file) with the
 * capability, Object Memory and session plugins, and a `ctx-notes` plugin whose `note_touch` tool emits one event and
 * returns a payload of a chosen size (so a scripted agent can grow its context at will).
 */

export const NOTES_SKILL = 'ctx-notes';
/** An image_only agent: its whole user message is its LLM context Object. */
export const CTX_AGENT = 'ctx-agent:v0';
export const CTX_AGENT_PROMPT = 'You are a context test agent. Answer with tool calls only.';
export const CTX_AGENT_TOOLS = ['process_exit', 'get_current_time', 'note_touch'];

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
    ],
  });
}

/** Opens a runtime with capabilities, Object Memory, session and `ctx-notes`, and sequential ids. */
export async function openContextRuntime(opts: ContextHarnessOptions = {}): Promise<Runtime> {
  return openRuntime({
    path: opts.path ?? ':memory:',
    plugins: [capabilities(), objectMemory(), session(), notesPlugin(opts.contextManagement), ...(opts.plugins ?? [])],
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
    const objects = scope.service<ObjectsService & { inspect(oid: string): Promise<{ metadata: { tags: string[] } } | null> }>(SERVICE_NAMES.objects);
    const d = state.oid ? await objects.describe(state.oid) : null;
    const payload = d?.payloadAvailable ? ((await objects.readPayload(d.oid)) as ContextSnapshot['payload']) : null;
    const tags = d ? ((await objects.inspect(d.oid))?.metadata.tags ?? []) : [];
    return { oid: state.oid, generation: state.generation, labels: { ...state.labels }, version: d?.version ?? null, payload, tags };
  });
}

/** The LLM context section of a recorded prompt (from its heading to the end), or null when it has none. */
export function contextText(req: ScriptedRequestRecord): string | null {
  const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
  const at = user.indexOf('LLM context object:');
  return at === -1 ? null : user.slice(at);
}

/** Entry kinds of a context payload, in order. */
export const kinds = (payload: ContextSnapshot['payload']): string[] => (payload?.entries ?? []).map((e) => String(e.kind));
