import { hash } from 'node:crypto';
import { LibosError } from '@libos/sdk';
import type { LlmMessage } from '../llm/provider.js';
import type { KernelStore } from '../store/kernel-database.js';

/** The separator prompts are cut at: a paragraph is the unit stored once (`llm_texts`). */
export const PROMPT_CHUNK_SEPARATOR = '\n\n';

/** Rows written before K-9.10: each message lists the hex sha256 of every paragraph. Still read. */
const FORMAT_V1 = 'llm_texts/v1';
/** Each message lists the keys of its paragraph groups (K-9.10). */
export const PROMPT_FORMAT = 'llm_texts/v2';

/**
 * A group ends after a message's first paragraph (a heading that names the process is new in every prompt), after a
 * paragraph whose key's first digest byte is a multiple of `GROUP_SPREAD` (about every 8 paragraphs), or at
 * `GROUP_MOST` paragraphs. Boundaries follow the content, so an edited paragraph changes one group and the groups
 * around it stay shared with every other prompt that has them.
 */
const GROUP_SPREAD = 8;
const GROUP_MOST = 16;

/** A paragraph as stored: the key of its `llm_texts` row, or its text inline (the first time this runtime sent it). */
export type StoredParagraph = string | { readonly text: string };
/** A group as stored: the key of its `llm_texts` row (its paragraph keys, one per line), or its paragraphs inline. */
export type StoredGroup = string | readonly StoredParagraph[];

/** A stored message: its text as groups of paragraphs (K-9.10). */
export interface StoredMessage {
  readonly role: LlmMessage['role'];
  readonly groups: readonly StoredGroup[];
  readonly tool_call_id?: string;
}

interface StoredMessageV1 {
  readonly role: LlmMessage['role'];
  readonly text_sha256: readonly string[];
  readonly tool_call_id?: string;
}

/** Past this many keys a `SeenTexts` starts over (a text seen before then is stored inline once more). */
const SEEN_MOST = 100_000;

/**
 * The texts (paragraphs and groups, by key) one runtime has sent to a model before. A text goes to `llm_texts` the
 * second time it is sent; the first time it is stored inline in its call's row: most of a prompt repeats (Skills,
 * the process line) and is stored once as a row, while what is new in every prompt (recent events, the memory view)
 * never pays for a row and its place in the key index. Only a hint: either form reads back the same, so it is kept
 * in memory per runtime, outside transactions, and starts empty on open.
 *
 * @example
 * const seen = new SeenTexts();
 * seen.again('k'); // false: the first time
 * seen.again('k'); // true
 */
export class SeenTexts {
  readonly #keys = new Set<string>();

  /** Whether `key` was seen before; notes it either way. */
  again(key: string): boolean {
    if (this.#keys.has(key)) return true;
    if (this.#keys.size >= SEEN_MOST) this.#keys.clear();
    this.#keys.add(key);
    return false;
  }
}

/** The sha256 of a text in base64url (43 characters): the key of an `llm_texts` row written since K-9.10. */
function textKey(text: string): { key: string; first: number } {
  const digest = hash('sha256', text, 'buffer'); // one-shot: no Hash object per paragraph
  return { key: digest.toString('base64url'), first: digest[0]! };
}

/**
 * Cuts each message into paragraphs and the paragraphs into content-defined groups. A paragraph or a group `seen`
 * before is stored by key, and returned in `texts` (the rows to insert: a group's text is its paragraph keys, one
 * per line); one not seen before is stored inline. Without `seen`, every text is stored by key.
 *
 * @example
 * const { messages, texts } = promptTexts([{ role: 'user', content: 'Goal:\nx\n\nRecent events:\n- none' }]);
 * messages[0]!.groups.length; // 2: the first paragraph stands alone
 * texts.size; // 4: two paragraphs and their groups
 */
export function promptTexts(messages: readonly LlmMessage[], seen?: SeenTexts): { messages: StoredMessage[]; texts: Map<string, string> } {
  const texts = new Map<string, string>();
  const stored = messages.map((m) => {
    const groups: StoredGroup[] = [];
    let keys: string[] = [];
    let entries: StoredParagraph[] = [];
    const close = () => {
      const text = keys.join('\n');
      const { key } = textKey(text);
      const again = seen ? seen.again(key) : true;
      if (again && entries.every((e) => typeof e === 'string')) {
        texts.set(key, text);
        groups.push(key);
      } else groups.push(entries);
      keys = [];
      entries = [];
    };
    for (const paragraph of m.content.split(PROMPT_CHUNK_SEPARATOR)) {
      const { key, first } = textKey(paragraph);
      keys.push(key);
      if (seen ? seen.again(key) : true) {
        texts.set(key, paragraph);
        entries.push(key);
      } else entries.push({ text: paragraph });
      if (first % GROUP_SPREAD === 0 || keys.length === GROUP_MOST || groups.length === 0) close();
    }
    if (keys.length > 0) close();
    return { role: m.role, groups, ...(m.tool_call_id !== undefined ? { tool_call_id: m.tool_call_id } : {}) };
  });
  return { messages: stored, texts };
}

/** The texts of `keys` from `llm_texts`; a key without a row is `store_corrupt` (the prompt cannot be rebuilt). */
async function readTexts(db: KernelStore, keys: readonly string[], what: string): Promise<Map<string, string>> {
  const unique = [...new Set(keys)];
  const texts = new Map<string, string>();
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db
      .selectFrom('llm_texts')
      .select(['sha256', 'text'])
      .where('sha256', 'in', unique.slice(i, i + 500))
      .execute();
    for (const r of rows) texts.set(r.sha256, r.text);
  }
  const missing = unique.filter((k) => !texts.has(k));
  if (missing.length > 0)
    throw new LibosError('store_corrupt', `llm_texts lacks ${missing.length} ${what} of a stored prompt (e.g. ${missing[0]})`);
  return texts;
}

/**
 * A stored request as it was sent: its messages' text read back from `llm_texts` (both formats); any other row (a
 * preview without full I/O, an inline request of an older store) as it is.
 */
export async function sentRequest(db: KernelStore, stored: unknown): Promise<unknown> {
  const s = stored as { format?: string; messages?: unknown[] };
  if ((s.format !== PROMPT_FORMAT && s.format !== FORMAT_V1) || !Array.isArray(s.messages)) return stored;
  let paragraphs: StoredParagraph[][];
  if (s.format === FORMAT_V1) {
    paragraphs = (s.messages as StoredMessageV1[]).map((m) => [...m.text_sha256]);
  } else {
    const messages = s.messages as StoredMessage[];
    const keyed = messages.flatMap((m) => m.groups.filter((g) => typeof g === 'string'));
    const groups = await readTexts(db, keyed, 'paragraph group(s)');
    paragraphs = messages.map((m) => m.groups.flatMap((g) => (typeof g === 'string' ? groups.get(g)!.split('\n') : g)));
  }
  const keys = paragraphs.flat().filter((p) => typeof p === 'string');
  const texts = await readTexts(db, keys, 'paragraph(s)');
  const messages = (s.messages as (StoredMessage | StoredMessageV1)[]).map((m, i) => ({
    role: m.role,
    content: paragraphs[i]!.map((p) => (typeof p === 'string' ? texts.get(p)! : p.text)).join(PROMPT_CHUNK_SEPARATOR),
    ...(m.tool_call_id !== undefined ? { tool_call_id: m.tool_call_id } : {}),
  }));
  const { format: _format, ...rest } = s as Record<string, unknown>;
  return { ...rest, messages };
}
