import { describe, expect, it } from 'vitest';
import { LibosError } from './errors.js';
import { runGuarded, writeGuardOf } from './guarded-write.js';

describe('runGuarded', () => {
  const guard = { rows: 1, error: () => new LibosError('conflict', 'row r changed concurrently') };
  const query = { sql: 'update "t" set "a" = ? where "id" = ? and "a" = ?', parameters: [2, 'r', 1] };
  const store = (affected: bigint | undefined, seen: object[] = []) => ({
    executeQuery: async (q: object) => {
      seen.push(q);
      return affected === undefined ? {} : { numAffectedRows: affected };
    },
  });

  it('[K-15.23] hands the store the query marked with its guard, and passes when the rows it names changed', async () => {
    const seen: object[] = [];
    await runGuarded(store(1n, seen), query, guard);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject(query);
    expect(writeGuardOf(seen[0]!)).toBe(guard);
    expect(writeGuardOf(query)).toBeUndefined(); // the caller's query is left as it was
  });

  it("[K-15.23] a write that changed other than the guard's rows fails with the guard's error", async () => {
    await expect(runGuarded(store(0n), query, guard)).rejects.toThrow('row r changed concurrently');
    await expect(runGuarded(store(2n), query, guard)).rejects.toMatchObject({ code: 'conflict' });
    await expect(runGuarded(store(undefined), query, guard)).rejects.toMatchObject({ code: 'conflict' });
  });
});
