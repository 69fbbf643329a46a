import { canonicalJson, LibosError, sha256Hex, type ImageDefinition } from '@libos/sdk';
import { callTool } from '../broker/tool-broker.js';
import type { ToolCallResult } from '../broker/tool-result.js';
import type { LlmProfile } from '../config/host-config.js';
import type { RenderedPrompt } from '../executor/render-prompt.js';
import { callStopReason, type StopReason } from '../executor/stop-reason.js';
import type { KernelDeps } from '../internal/kernel-deps.js';
import type { ProcessInfo } from '../processes/process-record.js';
import { inTransaction } from '../store/transaction.js';
import { findContextRow, updateContextRow, type PressureState } from './context-store.js';
import { estimateInput, type InputEstimate } from './input-estimate.js';
import { DEFAULT_MAINTENANCE_TOOL, maintenanceSettings, type MaintenanceSettings } from './maintenance-settings.js';
import { resources } from '@libos/sdk';

export {
  contextManagementProblems,
  DEFAULT_MAINTENANCE_TOOL,
  DEFAULT_PRESSURE_NOTICE,
  DEFAULT_THRESHOLD_RATIO,
  maintenanceSettings,
  type MaintenanceSettings,
} from './maintenance-settings.js';

/** A context payload this large (canonical JSON, UTF-8) is compacted whatever the mode: max_chunks 4, preserve 0. */
export const STORAGE_TRIGGER_BYTES = 96_000;
export const STORAGE_TRIGGER_ARGUMENTS = Object.freeze({ force: true, max_chunks: 4, preserve_recent_entries: 0 });
/** The projection of one prompt against the run's model window. */
export interface Pressure {
  readonly window: number;
  readonly input: number;
  readonly reserve: number;
  readonly projected: number;
  readonly ratio: number;
  readonly method: InputEstimate['method'];
}

/** What maintenance decided before the model call: send this prompt, or end the quantum with the maintenance call. */
export type Maintained =
  | { readonly kind: 'prompt'; readonly prompt: RenderedPrompt; readonly pressure: Pressure | null }
  | { readonly kind: 'dispatched'; readonly tool: string; readonly result: ToolCallResult; readonly stopReason: StopReason };

export interface MaintainOptions {
  readonly profile: LlmProfile | null;
  /** The model the provider will be asked (the tokenizer is chosen by it). */
  readonly model: string;
}

/**
 * The MemoryView budget of a prompt under a window (at most the default 8,000): half of it for an `image_only` image
 * (whose prompt is little more than its memory, e.g. a compressor's stage), a third otherwise.
 */
export function viewTokenBudgetFor(profile: LlmProfile | null | undefined, image?: ImageDefinition): number | undefined {
  if (!profile) return undefined;
  const share = image?.promptMode === 'image_only' ? 2 : 3;
  return Math.max(128, Math.min(8000, Math.floor(profile.context_window / share)));
}

/** What `auto_compact` passes to the default tool before the image's own arguments: force, and half the threshold as target. */
function pressureArguments(s: MaintenanceSettings, window: number): Record<string, unknown> {
  if (s.tool.name !== DEFAULT_MAINTENANCE_TOOL) return {};
  return { force: true, target_tokens: Math.min(64_000, Math.max(256, Math.floor((window * s.thresholdRatio) / 2))) };
}

const fingerprintOf = (s: MaintenanceSettings) => sha256Hex(canonicalJson({ mode: s.mode, threshold: s.thresholdRatio, tool: s.tool }));

async function audit(deps: KernelDeps, pid: string, decision: string, details: Record<string, unknown>): Promise<void> {
  await inTransaction(deps.db, deps.scopes, pid, null, (scope) =>
    scope.audit.record({ action: 'llm.context_maintenance', target: resources.process(pid), decision, details }),
  );
}

async function setPressure(deps: KernelDeps, pid: string, pressure: PressureState): Promise<void> {
  await inTransaction(deps.db, deps.scopes, 'host', null, (scope) =>
    updateContextRow(scope.store, pid, { pressure }, scope.clock.now().toISOString()),
  );
}

/**
 * The maintenance tool, dispatched through the ToolBroker under the process's pid (its table, status, arguments,
 * budget, authority and audit all apply). The runtime asked, not the model: no result Object enters its view.
 */
async function dispatch(deps: KernelDeps, p: ProcessInfo, name: string, args: Readonly<Record<string, unknown>>): Promise<ToolCallResult> {
  return callTool(deps, p.pid, name, { ...args }, { origin: { kind: 'host' } });
}

/**
 * Context maintenance before a model call (the process keeps an LLM context Object, or at least a window applies):
 *
 * 1. Storage trigger: a context payload of STORAGE_TRIGGER_BYTES or more is compacted (force, max_chunks 4, preserve
 *    0) whatever the mode; if that compaction fails, the process fails.
 * 2. With the run's profile (`context_window`, `max_tokens`): ratio = (conservative input estimate + `max_tokens`) /
 *    window. At or over the image's threshold a pressure episode is on until a prompt projects under it again:
 *    `auto_compact` dispatches the image's tool through the broker once per episode and policy fingerprint, and only
 *    with `context:maintenance` execute and a context Object (else it records `not_authorized` and changes nothing);
 *    `prompt` appends a pressure notice; `disabled` does nothing.
 * 3. A prompt still projected over the window is never sent: `resource_limit_exceeded`, before the model call.
 *
 * A dispatched call that parks (a compaction's stage) ends the quantum; one that answers at once lets it go on.
 */
export async function maintainContext(
  deps: KernelDeps,
  p: ProcessInfo,
  prompt: RenderedPrompt,
  opts: MaintainOptions,
): Promise<Maintained> {
  const image = deps.registry.images.get(p.imageId);
  const settings = maintenanceSettings(image);
  const context = prompt.context;
  if (context && context.payloadBytes >= STORAGE_TRIGGER_BYTES) {
    const details = {
      payload_bytes: context.payloadBytes,
      trigger_bytes: STORAGE_TRIGGER_BYTES,
      tool: DEFAULT_MAINTENANCE_TOOL,
      arguments: STORAGE_TRIGGER_ARGUMENTS,
    };
    await audit(deps, p.pid, 'storage_trigger', details);
    const r = await dispatch(deps, p, DEFAULT_MAINTENANCE_TOOL, STORAGE_TRIGGER_ARGUMENTS);
    if (!r.ok) {
      throw new LibosError(
        r.error.code,
        `the LLM context of ${p.pid} reached ${context.payloadBytes} bytes (the storage trigger is ${STORAGE_TRIGGER_BYTES}) ` +
          `and its compaction failed: ${r.error.message}`,
        {
          details: { ...details, error: r.error },
        },
      );
    }
    if (r.wait) return { kind: 'dispatched', tool: DEFAULT_MAINTENANCE_TOOL, result: r, stopReason: callStopReason(r) ?? 'waiting_child' };
  }
  const profile = opts.profile;
  if (!profile) return { kind: 'prompt', prompt, pressure: null };
  const estimate = await estimateInput(opts.model, prompt.messages, prompt.tools);
  const reserve = profile.max_tokens;
  const projected = estimate.tokens + reserve;
  const pressure: Pressure = {
    window: profile.context_window,
    input: estimate.tokens,
    reserve,
    projected,
    ratio: projected / profile.context_window,
    method: estimate.method,
  };
  const facts = {
    window: pressure.window,
    input: pressure.input,
    reserve,
    projected,
    utilization: Math.round(pressure.ratio * 1000) / 10,
    method: estimate.method,
    mode: settings.mode,
  };
  const row = context ? await findContextRow(deps.db, p.pid) : null;
  let out: RenderedPrompt = prompt;
  if (pressure.ratio < settings.thresholdRatio) {
    if (row?.pressure.active) await setPressure(deps, p.pid, { active: false, attempted: null });
  } else {
    if (row && !row.pressure.active) await setPressure(deps, p.pid, { active: true, attempted: null });
    const fingerprint = fingerprintOf(settings);
    const attempted = row?.pressure.active ? row.pressure.attempted : null;
    if (settings.mode === 'prompt' && image?.promptMode !== 'image_only') {
      out = withNotice(prompt, settings.prompt, pressure);
    } else if (settings.mode === 'auto_compact' && context && attempted !== fingerprint) {
      // Without a context Object there is nothing to compact: the window check below still holds the line.
      const allowed = await inTransaction(deps.db, deps.scopes, 'host', null, (scope) =>
        scope.authorityFor(p.pid).check('context:maintenance', 'execute'),
      );
      await setPressure(deps, p.pid, { active: true, attempted: fingerprint });
      if (!allowed.allowed) {
        await audit(deps, p.pid, 'not_authorized', { ...facts, needs: 'execute on context:maintenance' });
      } else {
        // Pressure is the reason to compact: the call is forced (its own under-target check measures the context
        // alone, not the whole prompt) and aims at half the threshold, unless the image's arguments say otherwise.
        const args = { ...pressureArguments(settings, profile.context_window), ...settings.tool.arguments };
        await audit(deps, p.pid, 'dispatched', { ...facts, tool: settings.tool.name, arguments: args });
        const r = await dispatch(deps, p, settings.tool.name, args);
        if (r.ok && r.wait)
          return { kind: 'dispatched', tool: settings.tool.name, result: r, stopReason: callStopReason(r) ?? 'waiting_child' };
        if (!r.ok) await audit(deps, p.pid, 'tool_failed', { ...facts, tool: settings.tool.name, error: r.error });
      }
    }
  }
  if (projected > profile.context_window) {
    throw new LibosError(
      'resource_limit_exceeded',
      `the prompt of ${p.pid} projects to ${projected} tokens (input ${estimate.tokens} + max_tokens ${reserve}), ` +
        `over the context window ${profile.context_window} of profile ${profile.name}; nothing was sent to the model`,
      { details: { ...facts, profile: profile.name } },
    );
  }
  return { kind: 'prompt', prompt: out, pressure };
}

/** The prompt with a pressure notice after its user message: the context render above it is left as it was. */
function withNotice(prompt: RenderedPrompt, text: string, p: Pressure): RenderedPrompt {
  const pct = (p.ratio * 100).toFixed(1);
  const figures = `input about ${p.input}; reply reserve ${p.reserve}; projected ${p.projected} (${pct}% of the window)`;
  const notice = `${text}\nWindow ${p.window} tokens; ${figures}.`;
  const messages = prompt.messages.map((m, i) =>
    i === prompt.messages.length - 1 && m.role === 'user' ? { ...m, content: `${m.content}\n\n${notice}` } : m,
  );
  return { ...prompt, messages, tokens: prompt.tokens + Math.ceil(notice.length / 4) };
}
