import { canonicalJson, LibosError, preparedQuery, preparedQueryPerSize, runGuarded, sha256Hex } from '@libos/sdk';
import type { Insertable } from 'kysely';
import type { LlmRequest, LlmResponse } from '../llm/provider.js';
import type { KernelStore, LlmCallsTable } from '../store/kernel-database.js';
import type { CommittedTexts } from './committed-texts.js';
import { PROMPT_FORMAT, promptTexts, type SeenTexts, sentRequest } from './prompt-texts.js';

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
  /**
   * The input tokens context maintenance estimated for this prompt before sending it (the figure it projected with
   * the profile's `max_tokens` against the window): null without a profile, and for a corrective retry.
   */
  readonly inputEstimateTokens: number | null;
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
  /** The input estimate maintenance projected for this prompt (null: none was made). */
  readonly inputEstimateTokens?: number | null;
  /** Store full prompts and replies (default); false keeps previews and hashes only. */
  readonly persistFullIo: boolean;
  /** The texts this runtime sent before: the rest is stored inline (K-9.10). Absent: every text by key. */
  readonly seen?: SeenTexts;
  /**
   * The texts committed transactions of this runtime stored (K-15.28), and how to note this call's once its
   * transaction commits (the scope's `afterCommit`). Absent: every text is sent (ON CONFLICT skips those stored).
   */
  readonly committed?: { readonly texts: CommittedTexts; readonly afterCommit: (fn: () => void) => void };
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

/**
 * The request as stored: with full I/O, each message's text is cut into paragraphs and the paragraphs into groups,
 * each kept once by sha256 in `llm_texts` (a prompt repeats most of its paragraphs every turn, and most of its groups
 * too), and the row holds the group keys (K-9.10); without, a preview and the hash of the whole request.
 */
async function storedRequest(db: KernelStore, c: LlmCallInput): Promise<unknown> {
  const tools = c.request.tools.map((t) => t.name);
  const full = { messages: c.request.messages, tools, parallel_tool_calls: c.request.parallelToolCalls };
  if (!c.persistFullIo) return preview(full);
  const { messages, texts } = promptTexts(c.request.messages, c.seen);
  await storeTexts(db, texts, c.committed);
  return { format: PROMPT_FORMAT, messages, tools, parallel_tool_calls: c.request.parallelToolCalls };
}

/** Texts inserted by one statement (128 parameters); a first prompt brings ~30 new ones, a later one a few. */
const TEXTS_AT_ONCE = 64;

/** The insert of `n` texts (ON CONFLICT absorbs one already stored), compiled once per store for each `n`. */
const insertTexts = preparedQueryPerSize(
  (n) => 2 * n,
  (db: KernelStore, args, n) =>
    db
      .insertInto('llm_texts')
      .values(Array.from({ length: n }, (_, i) => ({ sha256: args[2 * i]!, text: args[2 * i + 1]! })))
      .onConflict((oc) => oc.column('sha256').doNothing()),
);

/**
 * Inserts the texts not known to be stored (K-15.28): those `committed` holds went to `llm_texts` in a transaction
 * that committed, and its rows never change, so they are skipped; the rest are inserted, and ON CONFLICT absorbs a
 * text another host (or an earlier open) stored. Once this call's transaction commits, `committed` learns its texts:
 * each of them is stored then, inserted here or found so. Without `committed` every text is sent.
 */
async function storeTexts(db: KernelStore, texts: ReadonlyMap<string, string>, committed: LlmCallInput['committed']): Promise<void> {
  const rows: { sha256: string; text: string }[] = [];
  for (const [sha256, text] of texts) if (!committed?.texts.has(sha256)) rows.push({ sha256, text });
  if (rows.length === 0) return;
  for (let at = 0; at < rows.length; at += TEXTS_AT_ONCE) {
    const some = rows.slice(at, at + TEXTS_AT_ONCE);
    const args = some.flatMap((r) => [r.sha256, r.text]);
    await db.executeQuery(insertTexts(some.length)(db, args));
  }
  if (committed) committed.afterCommit(() => committed.texts.add(rows.map((r) => r.sha256)));
}

export async function recordLlmCall(db: KernelStore, c: LlmCallInput): Promise<void> {
  const request = await storedRequest(db, c);
  const response = c.response
    ? {
        content: c.response.content,
        tool_calls: c.response.toolCalls,
        api: c.response.api,
        model: c.response.model,
        usage: c.response.usage,
      }
    : null;
  const row: Omit<Insertable<LlmCallsTable>, 'purpose'> = {
    id: c.id,
    pid: c.pid,
    image_id: c.imageId,
    status: c.error ? 'error' : 'ok',
    provider: c.provider,
    model: c.model,
    request: JSON.stringify(request),
    response: response === null ? null : JSON.stringify(c.persistFullIo ? response : preview(response)),
    prompt_tokens: c.response?.usage.prompt_tokens ?? null,
    completion_tokens: c.response?.usage.completion_tokens ?? null,
    total_tokens: totalTokens(c.response),
    input_estimate_tokens: c.inputEstimateTokens ?? null,
    latency_ms: Math.round(c.latencyMs),
    error: c.error,
    created_at: c.createdAt,
  };
  // Nothing reads the row back in its unit and nothing acts outside the store on it, so a store that defers guarded
  // writes sends it with the unit's next statement (PostgreSQL: one round trip less per model call, K-15.26).
  await runGuarded(
    db,
    INSERT_LLM_CALL(
      db,
      LLM_CALL_COLUMNS.map((k) => row[k]),
    ),
    {
      rows: 1,
      error: () => new LibosError('store_corrupt', `llm_calls: the row of model call ${c.id} was not written`),
    },
  );
}

/** The columns of an `llm_calls` row in the order INSERT_LLM_CALL binds them (every model call writes one). */
const LLM_CALL_COLUMNS = [
  'id',
  'pid',
  'image_id',
  'status',
  'provider',
  'model',
  'request',
  'response',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'input_estimate_tokens',
  'latency_ms',
  'error',
  'created_at',
] as const satisfies readonly Exclude<keyof LlmCallsTable, 'seq' | 'purpose'>[];

const INSERT_LLM_CALL = preparedQuery(LLM_CALL_COLUMNS.length, (db: KernelStore, args) =>
  db.insertInto('llm_calls').values({
    ...(Object.fromEntries(LLM_CALL_COLUMNS.map((k, i) => [k, args[i]])) as unknown as Insertable<LlmCallsTable>),
    purpose: 'action_selection',
  }),
);

export async function queryLlmCalls(db: KernelStore, q: { pid?: string; limit?: number } = {}): Promise<LlmCallRecord[]> {
  let sel = db.selectFrom('llm_calls').selectAll();
  if (q.pid) sel = sel.where('pid', '=', q.pid);
  const rows = await sel
    .orderBy('seq')
    .limit(Math.max(1, Math.min(10_000, q.limit ?? 100)))
    .execute();
  const out: LlmCallRecord[] = [];
  for (const r of rows) {
    out.push({
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
      inputEstimateTokens: r.input_estimate_tokens ?? null,
      latencyMs: r.latency_ms,
      error: r.error,
      createdAt: r.created_at,
      request: await sentRequest(db, JSON.parse(r.request)),
      response: r.response ? JSON.parse(r.response) : null,
    });
  }
  return out;
}
