import { LibosError } from '@libos/sdk';

/**
 * Runs undo hooks newest first after `cause` rolled work back. If a hook (or, in `earlier`, the rollback itself)
 * failed, memory and store may disagree: `store_poisoned`, whose message starts with the cause and whose `cause`
 * holds every error. Used by transactions, savepoints and units of work alike.
 */
export function undoAll(hooks: readonly (() => void)[], cause: unknown, earlier: readonly unknown[] = []): void {
  const errors = [...earlier];
  for (const undo of [...hooks].reverse()) {
    try {
      undo();
    } catch (e) {
      errors.push(e);
    }
  }
  if (errors.length === 0) return;
  const first = LibosError.from(cause);
  throw new LibosError('store_poisoned', `${first.code}: ${first.message} (and undoing the rolled-back work failed too)`, {
    details: { error: first.toJSON() },
    cause: new AggregateError([cause, ...errors]),
  });
}
