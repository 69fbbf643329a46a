import type { LlmProvider, LlmRequest, LlmResponse, LlmToolCall, ScriptedProvider } from '@libos/kernel';

/** Replaces every `{{name}}` in the strings of `value` with `vars.get(name)` (unknown names stay as written). */
export function bindPlaceholders(value: unknown, vars: ReadonlyMap<string, string>): unknown {
  if (typeof value === 'string') return value.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => vars.get(name) ?? whole);
  if (Array.isArray(value)) return value.map((v) => bindPlaceholders(v, vars));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, bindPlaceholders(v, vars)]));
  return value;
}

/**
 * A `ScriptedProvider` whose scripted arguments may name what the "model" learned from earlier tool results:
 * `{{child}}` becomes the pid a spawn returned, the way a real model would copy it from the result. Still
 * deterministic. Remembers each pid's last turn so the demo can narrate it.
 */
export class BoundScriptedProvider implements LlmProvider {
  readonly name: string;
  readonly model: string;
  readonly vars = new Map<string, string>();
  readonly lastTurn = new Map<string, readonly LlmToolCall[]>();

  constructor(private readonly inner: ScriptedProvider) {
    this.name = inner.name;
    this.model = inner.model;
  }

  /** Model calls made so far. */
  get calls(): number {
    return this.inner.calls;
  }

  async completeAction(req: LlmRequest): Promise<LlmResponse> {
    const r = await this.inner.completeAction(req);
    const toolCalls = r.toolCalls.map((c) => ({ ...c, arguments: bindPlaceholders(c.arguments, this.vars) as Record<string, unknown> }));
    if (req.pid) this.lastTurn.set(req.pid, toolCalls);
    return { ...r, toolCalls };
  }
}
