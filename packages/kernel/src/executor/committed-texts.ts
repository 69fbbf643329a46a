/** Past this many keys a `CommittedTexts` starts over (a text then goes to the store once more; ON CONFLICT absorbs it). */
const COMMITTED_MOST = 50_000;

/**
 * The `llm_texts` keys that a committed transaction of this runtime wrote or found stored (K-15.28). A key names its
 * text and no row of `llm_texts` is ever changed or deleted, so once a transaction that held a key commits, the key
 * stays stored for the store's life, whichever host wrote the row: this set needs no invalidation, unlike the store
 * memo. That matters where the memo lasts one transaction (many hosts on one PostgreSQL store): without it, every
 * model call sent the repeated texts of its prompt again (~16 KB a quantum) for the server to skip. Keys are noted
 * only once their transaction has committed (`afterCommit`): a rolled-back insert leaves no row behind.
 *
 * @example
 * const committed = new CommittedTexts();
 * committed.has('k'); // false
 * committed.add(['k']); // after the transaction that inserted k committed
 * committed.has('k'); // true
 */
export class CommittedTexts {
  readonly #keys = new Set<string>();

  /** Whether a committed transaction stored (or found) `key`. */
  has(key: string): boolean {
    return this.#keys.has(key);
  }

  /** Notes `keys` as stored; call it only after the transaction that wrote or found them has committed. */
  add(keys: Iterable<string>): void {
    for (const key of keys) {
      if (this.#keys.size >= COMMITTED_MOST) this.#keys.clear();
      this.#keys.add(key);
    }
  }
}
