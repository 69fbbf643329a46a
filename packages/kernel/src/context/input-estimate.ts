import type { LlmMessage, LlmToolSchema } from '../llm/provider.js';

/**
 * The conservative estimate of a prompt's input tokens that context maintenance projects against a model's window.
 *
 * - OpenAI-family models (`gpt-*`, `o1`/`o3`/`o4`, `chatgpt-*`) are counted with their real tokenizer (o200k_base, or
 *   cl100k_base for gpt-4 and gpt-3.5), plus the chat format's per-message overhead, plus the tool schemas counted
 *   as their JSON text (longer than the form the API renders them in), plus a 2% margin.
 * - Any other model: UTF-8 bytes / BYTES_PER_TOKEN_BOUND, rounded up. Three bytes per token is below what every
 *   common tokenizer averages on English, code and JSON (about four), and a CJK character (three bytes) is about one
 *   token, so the bound errs high rather than letting a prompt past the window.
 */
export const BYTES_PER_TOKEN_BOUND = 3;

/** Tokens the chat format adds per message (role and separators) and once per reply, as OpenAI documents it. */
const PER_MESSAGE = 4;
const PER_REPLY = 3;
const MARGIN = 1.02;

export type EstimateMethod = 'o200k_base' | 'cl100k_base' | 'utf8_bytes_bound';

export interface InputEstimate {
  readonly tokens: number;
  readonly method: EstimateMethod;
}

type Encode = (text: string, opts: { disallowedSpecial: Set<string> }) => number[];
const encoders = new Map<string, Promise<Encode>>();
/** The encoder, its ranks (megabytes) loaded on first use only: a runtime that never meets an OpenAI model never loads them. */
function encoder(name: 'o200k_base' | 'cl100k_base'): Promise<Encode> {
  let e = encoders.get(name);
  if (!e) {
    const mod = name === 'o200k_base' ? import('gpt-tokenizer/encoding/o200k_base') : import('gpt-tokenizer/encoding/cl100k_base');
    e = mod.then((m) => m.encode as Encode);
    encoders.set(name, e);
  }
  return e;
}

/** Special-token text in a prompt is ordinary text here: encode it as such rather than throw. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * The tokenizer of an OpenAI-family model, or null (the byte bound is used).
 *
 * @example
 * tokenizerFor('gpt-4o-mini'); // 'o200k_base'
 * tokenizerFor('gpt-4-turbo'); // 'cl100k_base'
 * tokenizerFor('llama3.1:8b'); // null
 */
export function tokenizerFor(model: string): 'o200k_base' | 'cl100k_base' | null {
  const m = model.toLowerCase().replace(/^openai\//, '');
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|chatgpt-|o1|o3|o4|gpt-oss)/.test(m)) return 'o200k_base';
  if (/^(gpt-4|gpt-3\.5|text-embedding-3|text-embedding-ada)/.test(m)) return 'cl100k_base';
  return null;
}

/** Tokens of one text by the model's tokenizer, or by the byte bound. */
export async function countTokens(model: string, text: string): Promise<number> {
  const t = tokenizerFor(model);
  if (t === null) return Math.ceil(Buffer.byteLength(text, 'utf8') / BYTES_PER_TOKEN_BOUND);
  return (await encoder(t))(text, AS_TEXT).length;
}

/** Counts of texts already encoded (a context's entries and the tool schemas repeat every turn). Cleared when full. */
const memo = new Map<string, number>();
const MEMO_LIMIT = 4096;

async function memoCount(t: 'o200k_base' | 'cl100k_base', text: string): Promise<number> {
  const key = `${t}\u0000${text}`;
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  const n = (await encoder(t))(text, AS_TEXT).length;
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(key, n);
  return n;
}

/** Where a text is split for counting: between a context's entries (the render's `---` lines). */
const SEGMENT = '\n---\n';

/**
 * A text's tokens counted segment by segment, each segment once: splitting a text can only keep or add tokens (a
 * merge across the cut is lost, never gained), so the sum bounds the whole from above, and an append-only context
 * costs one new entry per turn to count.
 */
async function countSegments(t: 'o200k_base' | 'cl100k_base', text: string): Promise<number> {
  const parts = text.split(SEGMENT);
  let n = (parts.length - 1) * (await memoCount(t, SEGMENT));
  for (const part of parts) n += await memoCount(t, part);
  return n;
}

/**
 * The conservative input estimate of one request: its messages and its tool schemas.
 *
 * @example
 * await estimateInput('gpt-4o-mini', [{ role: 'user', content: 'hi' }], []); // { tokens: 8, method: 'o200k_base' }
 */
export async function estimateInput(
  model: string,
  messages: readonly LlmMessage[],
  tools: readonly LlmToolSchema[],
): Promise<InputEstimate> {
  const t = tokenizerFor(model);
  const toolsText = tools.length ? JSON.stringify(tools) : '';
  if (t === null) {
    const text = messages.map((m) => `${m.role}\n${m.content}`).join('\n') + toolsText;
    return { tokens: Math.ceil(Buffer.byteLength(text, 'utf8') / BYTES_PER_TOKEN_BOUND), method: 'utf8_bytes_bound' };
  }
  let n = PER_REPLY;
  for (const m of messages) n += PER_MESSAGE + (await memoCount(t, m.role)) + (await countSegments(t, m.content));
  if (toolsText) n += await memoCount(t, toolsText);
  return { tokens: Math.ceil(n * MARGIN), method: t };
}
