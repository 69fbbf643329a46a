import { LibosError, type DataLabels } from '@libos/sdk';

/** The payload `kind` of an LLM context Object. */
export const LLM_CONTEXT_KIND = 'llm_context';

/** The Object name of a process's LLM context. */
export const contextObjectName = (pid: string): string => `llm_context:${pid}`;

/** What the executor remembers between quanta so that it appends only what changed (never rendered). */
export interface CapturedSignatures {
  readonly process?: string;
  readonly capabilities?: string;
  readonly tools?: string;
  /** The last event (seq) an `events_delta` covered. */
  readonly events_seq?: number;
  /** sha256 of each MemoryView root's rendered line, by oid. */
  readonly memory?: Readonly<Record<string, string>>;
  /** The reason each omitted root was last reported omitted, by oid. */
  readonly omitted?: Readonly<Record<string, string>>;
}

/** One appended observation: `{ kind, at, ... }`. */
export type ContextEntry = Readonly<Record<string, unknown>> & { readonly kind: string };

/** The payload of `llm_context:<pid>` (schema 1). */
export interface ContextPayload {
  readonly kind: typeof LLM_CONTEXT_KIND;
  readonly schema_version: 1;
  readonly cache_strategy: { readonly mode: string; readonly compacted_at?: string };
  readonly static_prefix: Readonly<Record<string, unknown>>;
  readonly entries: readonly ContextEntry[];
  readonly captured: CapturedSignatures;
  readonly label_history: readonly { readonly at: string; readonly labels: DataLabels }[];
}

/** Checks that a stored payload is a context payload (it is a mutable Object: anyone with write could change it). */
export function asContextPayload(value: unknown, oid: string): ContextPayload {
  const p = value as Partial<ContextPayload> | null;
  if (
    p === null ||
    typeof p !== 'object' ||
    p.kind !== LLM_CONTEXT_KIND ||
    !Array.isArray(p.entries) ||
    typeof p.static_prefix !== 'object'
  ) {
    throw new LibosError(
      'invalid_state',
      `the LLM context Object ${oid} does not hold an llm_context payload (kind "${LLM_CONTEXT_KIND}" with entries)`,
      {
        details: { oid },
      },
    );
  }
  return { ...(p as ContextPayload), captured: p.captured ?? {}, label_history: p.label_history ?? [] };
}
