import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { LibosError } from '@libos/sdk';
import type { LlmMessage } from '../llm/provider.js';
import { SyncDeflate } from '../internal/sync-deflate.js';
import type { KernelStore } from '../store/kernel-database.js';
import { keyedParagraphs, PROMPT_CHUNK_SEPARATOR } from './message-parts.js';
import { TextKeys, type TextKey } from './text-keys.js';

export { PROMPT_CHUNK_SEPARATOR } from './message-parts.js';

/** Rows written before K-9.10: each message lists the hex sha256 of every paragraph. Still read. */
const FORMAT_V1 = 'llm_texts/v1';
/** Rows written by K-9.10: groups of paragraph keys and plain inline texts. Still read. */
const FORMAT_V2 = 'llm_texts/v2';
/** Each message lists its paragraph groups; new text is stored as runs, deflated when long (K-9.11). */
export const PROMPT_FORMAT = 'llm_texts/v3';

/**
 * A group ends after a message's first paragraph (a heading that names the process is new in every prompt), after a
 * paragraph whose key's first digest byte is a multiple of `GROUP_SPREAD` (about every 8 paragraphs), at
 * `GROUP_MOST` paragraphs, or where new text follows. Boundaries follow the content, so an edited paragraph changes
 * one group and the groups around it stay shared with every other prompt that has them.
 */
const GROUP_SPREAD = 8;
const GROUP_MOST = 16;

/**
 * A paragraph as stored: the key of its `llm_texts` row, or inline: its text, or its text raw-deflated (UTF-8) in
 * base64. An inline entry may hold several paragraphs (joined by `PROMPT_CHUNK_SEPARATOR`): a run of texts sent for
 * the first time is stored as one entry (K-9.11).
 */
export type StoredParagraph = string | { readonly text: string } | { readonly deflated: string };
/** A group as stored: the key of its `llm_texts` row (its paragraph keys, one per line), or its paragraphs inline. */
export type StoredGroup = string | readonly StoredParagraph[];

/**
 * A run of new text at least this long is stored deflated when that is shorter: what is new in every prompt (recent
 * events, the memory view) is JSON-heavy text that deflates to about a third (K-9.11).
 */
const INLINE_DEFLATE_FROM = 256;

/**
 * The deflater of new text (level 6), opened on first use and kept: `deflateRawSync` set up and freed ~256 KB of
 * native state for each run, ~90 µs of a ~25 µs job, twice a model turn (K-9.20). Null where Node lacks what it needs.
 */
let inlineDeflater: SyncDeflate | null | undefined;

/** `text` as one raw-deflate stream at level 6 (what `deflateRawSync(text, { level: 6 })` returns). */
function deflateInline(text: string): Buffer {
  if (inlineDeflater === undefined) inlineDeflater = SyncDeflate.open(6);
  return inlineDeflater ? inlineDeflater.whole(Buffer.from(text, 'utf8')) : deflateRawSync(text, { level: 6 });
}

/** A run of new text as stored inline: deflated when long and that saves room. */
function inlineEntry(text: string): StoredParagraph {
  if (text.length < INLINE_DEFLATE_FROM) return { text };
  const deflated = deflateInline(text).toString('base64');
  return deflated.length < text.length ? { deflated } : { text };
}

/** The text of an inline entry; one that does not inflate is `store_corrupt`. */
function inlineText(p: Exclude<StoredParagraph, string>): string {
  if ('text' in p) return p.text;
  try {
    return inflateRawSync(Buffer.from(p.deflated, 'base64')).toString('utf8');
  } catch (err) {
    throw new LibosError('store_corrupt', `a stored prompt's deflated text does not inflate (${(err as Error).message})`, { cause: err });
  }
}

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

/**
 * The key of an `llm_texts` row: the first 16 bytes of the text's sha256 in base64url (22 characters; K-9.11). Rows
 * written by K-9.10 are keyed by the whole digest (43 characters): a stored request names its texts by key, whichever
 * length, so both read back. The keys of texts stored by key are remembered per text (`text-keys.ts`): most of a
 * prompt was keyed last turn, while new text (recent events, the memory view) is keyed once and not kept.
 */
const TEXT_KEYS = new TextKeys();
const keyOf = (text: string): TextKey => TEXT_KEYS.of(text);

/** Whether `text` (keyed `k`) is stored by key: `seen` before, or every text without `seen`. Its key is remembered. */
function repeats(text: string, k: TextKey, seen: SeenTexts | undefined): boolean {
  if (seen && !seen.again(k.key)) return false; // new text: not remembered, most of it is never sent again
  TEXT_KEYS.remember(text, k);
  return true;
}

/**
 * Cuts each message into paragraphs and the paragraphs into groups. Paragraphs `seen` before are stored by key and
 * grouped where their content says (or where new text interrupts them); a group seen before is stored by key, one
 * seen for the first time as its list of paragraph keys. A run of paragraphs not seen before is stored inline as one
 * entry, deflated when long (K-9.11). `texts` holds the rows to insert (a group's text is its paragraph keys, one per
 * line). Without `seen`, every text is stored by key.
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
    let fresh: string[] = [];
    const closeKeys = () => {
      if (keys.length === 0) return;
      const text = keys.join('\n');
      const k = TEXT_KEYS.of(text);
      const { key } = k;
      if (repeats(text, k, seen)) {
        texts.set(key, text);
        groups.push(key);
      } else groups.push(keys);
      keys = [];
    };
    const closeFresh = () => {
      if (fresh.length === 0) return;
      groups.push([inlineEntry(fresh.join(PROMPT_CHUNK_SEPARATOR))]);
      fresh = [];
    };
    const { paragraphs, keys: paragraphKeys } = keyedParagraphs(m, keyOf);
    for (let i = 0; i < paragraphs.length; i++) {
      const paragraph = paragraphs[i]!;
      const k = paragraphKeys[i]!;
      const { key, first } = k;
      const opening = groups.length === 0 && keys.length === 0 && fresh.length === 0; // stands alone
      if (repeats(paragraph, k, seen)) {
        closeFresh();
        texts.set(key, paragraph);
        keys.push(key);
        if (opening || first % GROUP_SPREAD === 0 || keys.length === GROUP_MOST) closeKeys();
      } else {
        closeKeys();
        fresh.push(paragraph);
        if (opening) closeFresh();
      }
    }
    closeKeys();
    closeFresh();
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
  const known = s.format === PROMPT_FORMAT || s.format === FORMAT_V2 || s.format === FORMAT_V1;
  if (!known || !Array.isArray(s.messages)) return stored;
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
    content: paragraphs[i]!.map((p) => (typeof p === 'string' ? texts.get(p)! : inlineText(p))).join(PROMPT_CHUNK_SEPARATOR),
    ...(m.tool_call_id !== undefined ? { tool_call_id: m.tool_call_id } : {}),
  }));
  const { format: _format, ...rest } = s as Record<string, unknown>;
  return { ...rest, messages };
}
