import { LibosError } from '@libos/sdk';
import { appendTarget } from './append.js';
import { canonicalize, canonicalLength, quotedLength, type Canonical } from './canonical.js';
import type { JsonValue } from './json-value.js';
import { deepFreeze } from './deep-freeze.js';
import { jsonSize, stringSize } from './size.js';

/** What a payload measures: SIZE (every byte bound) and the code points of its CANON (token estimate). */
export interface PayloadStats {
  readonly size: number;
  readonly canonicalChars: number;
}

/** An append checked against the payload as it is now; nothing changes until `apply`. */
export interface AppendPlan {
  /** The list field appended to, or null when the root itself is the list. */
  readonly listField: string | null;
  /** Length of the list after the append. */
  readonly length: number;
  /** The payload's stats after the append. */
  readonly after: PayloadStats;
  /** Appends the entry; returns the undo, which puts the payload back exactly as it was. */
  apply(): () => void;
}

/**
 * One cached payload, built for ledgers: an append pushes the entry onto its list's tail and moves SIZE and the
 * CANON length by the entry's share, so it costs O(entry), never O(payload). The frozen value a reader gets is
 * rebuilt from the last value and the tails only on the first read after appends, and CANON with its digest only
 * on the first read that needs it. Values handed out are deep-frozen copies: later appends never change them.
 */
export class PayloadCell {
  /** Frozen value as of the last set or read; `tails` continue its lists. */
  private base: JsonValue;
  /** Entries appended since `base` was built, by list (null: the root list), in first-append order. */
  private tails = new Map<string | null, JsonValue[]>();
  /** Own keys of an object root, counting fields the tails created. */
  private fields: number;
  private measured: PayloadStats;
  private canon: Canonical | undefined;
  /** Bumped on every content change, so a stale plan is refused. */
  private changes = 0;

  constructor(value: JsonValue) {
    this.base = deepFreeze(value);
    this.fields = value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value).length : 0;
    this.measured = { size: jsonSize(value), canonicalChars: canonicalLength(value) };
  }

  /** The payload as a deep-frozen value. */
  value(): JsonValue {
    if (this.tails.size > 0) this.rebuild();
    return this.base;
  }

  stats(): PayloadStats {
    return this.measured;
  }

  /** CANON of the whole payload, its bytes and sha256, computed once per content. */
  canonical(): Canonical {
    this.canon ??= canonicalize(this.value());
    return this.canon;
  }

  /**
   * Plans appending `entry` (already a JSON copy, SIZE `entrySize`) at `listField`: throws
   * `append_field_not_list` / `append_target_not_container`, else returns the outcome and the stats after it.
   */
  planAppend(listField: string, entry: JsonValue, entrySize: number): AppendPlan {
    const target = appendTarget(this.base, listField);
    const tail = this.tails.get(target.key);
    const before = (target.list?.length ?? 0) + (tail?.length ?? 0);
    const entryChars = canonicalLength(entry);
    const { size, canonicalChars } = this.measured;
    let after: PayloadStats;
    if (target.key !== null && target.list === undefined && tail === undefined) {
      // A new field `"key": [entry]`, after a separator unless the object was empty.
      const sep = this.fields > 0 ? 1 : 0;
      after = {
        size: size + 2 * sep + stringSize(target.key) + 2 + 2 + entrySize,
        canonicalChars: canonicalChars + sep + quotedLength(target.key) + 1 + 2 + entryChars,
      };
    } else {
      const sep = before > 0 ? 1 : 0;
      after = { size: size + 2 * sep + entrySize, canonicalChars: canonicalChars + sep + entryChars };
    }
    const planned = this.changes;
    return {
      listField: target.key,
      length: before + 1,
      after,
      apply: () => {
        if (this.changes !== planned)
          throw new LibosError('internal_error', 'payload: changed between planning and applying an append; nothing was appended');
        const undo = this.saveState();
        if (tail === undefined) {
          this.tails.set(target.key, [deepFreeze(entry)]);
          if (target.key !== null && target.list === undefined) this.fields++;
        } else tail.push(deepFreeze(entry));
        this.measured = after;
        this.canon = undefined;
        this.changes++;
        return undo;
      },
    };
  }

  /** A closure that puts back the content, stats and caches as they are now. */
  private saveState(): () => void {
    const { base, fields, measured, canon } = this;
    const tails = [...this.tails].map(([key, list]) => [key, list, list.length] as const);
    return () => {
      this.base = base;
      this.tails = new Map(
        tails.map(([key, list, length]) => {
          list.length = length;
          return [key, list];
        }),
      );
      this.fields = fields;
      this.measured = measured;
      this.canon = canon;
      this.changes++;
    };
  }

  /** Folds the tails into a new frozen value (O(payload), on a read). */
  private rebuild(): void {
    const base = this.base;
    if (Array.isArray(base)) {
      this.base = Object.freeze([...(base as readonly JsonValue[]), ...this.tails.get(null)!]);
    } else {
      const obj = base as { readonly [key: string]: JsonValue };
      const next: Record<string, JsonValue> = { ...obj };
      for (const [key, tail] of this.tails) {
        const head = Object.hasOwn(obj, key!) ? (obj[key!] as readonly JsonValue[]) : [];
        // defineProperty keeps "__proto__" an own data property; an existing key keeps its place.
        Object.defineProperty(next, key!, {
          value: Object.freeze([...head, ...tail]),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      this.base = Object.freeze(next);
    }
    this.tails = new Map();
  }
}
