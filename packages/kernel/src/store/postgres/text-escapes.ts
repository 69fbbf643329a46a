/**
 * What PostgreSQL cannot hold, and how the store still keeps it exactly. A JavaScript string may hold a NUL or an
 * unpaired UTF-16 surrogate (SQLite keeps both); PostgreSQL's `text` refuses NUL (22021) and `pg` would write an
 * unpaired surrogate as U+FFFD, and `jsonb` refuses the JSON escapes `\u0000` (22P05) and a lone `\ud800` (22P02).
 * So every string parameter is escaped on the way in and every `text`/`json`/`jsonb` value unescaped on the way out,
 * with U+FFFF (a noncharacter, valid UTF-8) as the escape mark:
 *
 * - a raw NUL, unpaired surrogate or U+FFFF is `U+FFFF` + its code unit in four lowercase hex digits;
 * - a JSON escape `\u0000` or `\udXXX` outside a backslash pair is `U+FFFF` + `u` + its four hex digits.
 *
 * Text without those (nearly all) passes unchanged, so equality, ordering and `like` on it are PostgreSQL's own. A
 * value read back is the value written, byte for byte; only SQL that looks inside such a string (`->>`) sees the
 * escaped form.
 *
 * @example
 * decodeText(encodeParam('a\u0000b')) === 'a\u0000b'; // stored as 'a\uffff0000b'
 * JSON.parse(decodeJson(encodeParam('{"k":"\\ud800"}'))).k === '\ud800'; // jsonb holds "\uffffud800"
 */

const MARK = '\uffff';
/** What needs the slow path: a raw NUL, surrogate or mark, or a backslash-u that may start a bad escape. */
const SUSPECT = /[\u0000\ud800-\udfff\uffff]|\\u(?:0000|[dD][89a-fA-F])/;
const HEX4 = /^[0-9a-fA-F]{4}$/;
const ESCAPED = /\uffff(u?)([0-9a-f]{4})/g;

const hex4 = (code: number) => code.toString(16).padStart(4, '0');
const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** A JSON escape `\uXXXX` that `jsonb` refuses: NUL or any surrogate (JSON.stringify writes pairs raw). */
function badEscape(text: string, i: number): string | undefined {
  if (text[i + 1] !== 'u') return undefined;
  const hex = text.slice(i + 2, i + 6);
  if (!HEX4.test(hex)) return undefined;
  const code = Number.parseInt(hex, 16);
  return code === 0 || (code >= 0xd800 && code <= 0xdfff) ? hex.toLowerCase() : undefined;
}

/** A string parameter as PostgreSQL can hold it (unchanged unless it holds something it cannot). */
export function encodeParam(text: string): string {
  if (!SUSPECT.test(text)) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) {
      const bad = badEscape(text, i);
      if (bad !== undefined) {
        out += `${MARK}u${bad}`;
        i += 5;
      } else if (text.charCodeAt(i + 1) === 0x5c) {
        // A backslash pair is one escaped backslash: the character after it starts nothing.
        out += '\\\\';
        i += 1;
      } else out += '\\';
    } else if (isHigh(c) && isLow(text.charCodeAt(i + 1))) {
      out += text[i]! + text[i + 1]!;
      i += 1;
    } else if (c === 0 || c === 0xffff || isHigh(c) || isLow(c)) out += MARK + hex4(c);
    else out += text[i];
  }
  return out;
}

/** A `text` value read back: each mark made what was written (a raw character, or the six-character escape). */
export function decodeText(value: string): string {
  if (!value.includes(MARK)) return value;
  return value.replace(ESCAPED, (_m, u: string, hex: string) => (u ? `\\u${hex}` : String.fromCharCode(Number.parseInt(hex, 16))));
}

/** A `json`/`jsonb` value's text read back: each mark an escape (a raw NUL is not valid inside JSON text). */
export function decodeJson(value: string): string {
  if (!value.includes(MARK)) return value;
  return value.replace(ESCAPED, (_m, _u: string, hex: string) => `\\u${hex}`);
}

/** Query parameters with every string escaped (`encodeParam`); the same array when none needed it. */
export function encodeParams(params: readonly unknown[]): readonly unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    if (typeof p !== 'string') continue;
    const e = encodeParam(p);
    if (e !== p) (out ??= [...params])[i] = e;
  }
  return out ?? params;
}
