import type { Kysely } from 'kysely';
import { canonicalJson, sha256Hex } from '@libos/sdk';
import type { LlmRequest, LlmResponse } from '../llm/provider.js';

/** One row of `llm_calls`: every model call, ok or not, with its usage and latency. */
export interface LlmCallRecord {
  readonly id: string;
  readonly pid: string;
  readonly imageId: string;
  readonly purpose: string;
  readonly status: 'ok' | 'error';
  readonly provider: string;
  readonly model: string;
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
  readonly totalTokens: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
  readonly createdAt: string;
  readonly request: unknown;
  readonly response: unknown;
}

export interface LlmCallInput {
  readonly id: string;
  readonly pid: string;
  readonly imageId: string;
  readonly provider: string;
  readonly model: string;
  readonly request: Pick<LlmRequest, 'messages' | 'tools' | 'parallelToolCalls'>;
  readonly response: LlmResponse | null;
  readonly error: string | null;
  readonly latencyMs: number;
  readonly createdAt: string;
  /** Store full prompts and replies (default); false keeps previews and hashes only. */
  readonly persistFullIo: boolean;
}

function preview(value: unknown): { sha256: string; bytes: number; preview: string } {
  const text = canonicalJson(value ?? null);
  return { sha256: sha256Hex(text), bytes: Buffer.byteLength(text, 'utf8'), preview: text.slice(0, 200) };
}

/** Total tokens, defaulting to prompt + completion when the provider left it out. */
export function totalTokens(r: LlmResponse | null): number | null {
  if (!r) return null;
  const u = r.usage;
  if (u.total_tokens !== null) return u.total_tokens;
  return u.prompt_tokens !== null && u.completion_tokens !== null ? u.prompt_tokens + u.completion_tokens : null;
}

export async function recordLlmCall(db: Kysely<any>, c: LlmCallInput): Promise<void> {
  const request = { messages: c.request.messages, tools: c.request.tools.map((t) => t.name), parallel_tool_calls: c.request.parallelToolCalls };
  const response = c.response ? { content: c.response.content, tool_calls: c.response.toolCalls, api: c.response.api, model: c.response.model, usage: c.response.usage } : null;
  await db
    .insertInto('llm_calls')
    .values({
      id: c.id,
      pid: c.pid,
      image_id: c.imageId,
      purpose: 'action_selection',
      status: c.error ? 'error' : 'ok',
      provider: c.provider,
      model: c.model,
      request: JSON.stringify(c.persistFullIo ? request : preview(request)),
      response: response === null ? null : JSON.stringify(c.persistFullIo ? response : preview(response)),
      prompt_tokens: c.response?.usage.prompt_tokens ?? null,
      completion_tokens: c.response?.usage.completion_tokens ?? null,
      total_tokens: totalTokens(c.response),
      latency_ms: Math.round(c.latencyMs),
      error: c.error,
      created_at: c.createdAt,
    })
    .execute();
}

export async function queryLlmCalls(db: Kysely<any>, q: { pid?: string; limit?: number } = {}): Promise<LlmCallRecord[]> {
  let sel = db.selectFrom('llm_calls').selectAll();
  if (q.pid) sel = sel.where('pid', '=', q.pid);
  const rows = await sel.orderBy('seq').limit(Math.max(1, Math.min(10_000, q.limit ?? 100))).execute();
  return rows.map((r) => ({
    id: r.id,
    pid: r.pid,
    imageId: r.image_id,
    purpose: r.purpose,
    status: r.status,
    provider: r.provider,
    model: r.model,
    promptTokens: r.prompt_tokens,
    completionTokens: r.completion_tokens,
    totalTokens: r.total_tokens,
    latencyMs: r.latency_ms,
    error: r.error,
    createdAt: r.created_at,
    request: JSON.parse(r.request),
    response: r.response ? JSON.parse(r.response) : null,
  }));
}
