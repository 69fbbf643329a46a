/**
 * `JSON.stringify` without recursion: V8's own stops at a few thousand levels (RangeError), and the fuzzer sends
 * values nested 10,000 deep over HTTP. Same output as `JSON.stringify` for plain data (own enumerable string keys,
 * `undefined` members skipped in objects and `null` in arrays, non-finite numbers as `null`).
 *
 * @example
 * jsonText({ a: [1, undefined, Number.NaN] }); // '{"a":[1,null,null]}'
 */
export function jsonText(value: unknown): string {
  const out: string[] = [];
  // Work items: a value to write, or literal text (separators, closing brackets).
  const stack: ({ readonly v: unknown } | string)[] = [{ v: value }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      out.push(item);
      continue;
    }
    const v = item.v;
    if (v === null || v === undefined || typeof v === 'function' || typeof v === 'symbol') out.push('null');
    else if (typeof v === 'number') out.push(Number.isFinite(v) ? JSON.stringify(v) : 'null');
    else if (typeof v === 'string' || typeof v === 'boolean') out.push(JSON.stringify(v));
    else if (typeof v === 'bigint') throw new TypeError('jsonText: a BigInt is not JSON');
    else if (Array.isArray(v)) {
      stack.push(']');
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i] }, ...(i > 0 ? [','] : []));
      out.push('[');
    } else {
      const written = ([, x]: [string, unknown]) => x !== undefined && typeof x !== 'function' && typeof x !== 'symbol';
      const entries = Object.entries(v as Record<string, unknown>).filter(written);
      stack.push('}');
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, x] = entries[i]!;
        stack.push({ v: x }, `${JSON.stringify(key)}:`, ...(i > 0 ? [','] : []));
      }
      out.push('{');
    }
  }
  return out.join('');
}
