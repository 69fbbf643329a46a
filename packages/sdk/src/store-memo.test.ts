import { describe, expect, it } from 'vitest';
import type { OwnedResource, OwnershipResolver } from './plugin.js';
import { foundRows, ownerMemoKey, rememberOwner, type StoreMemo } from './store-memo.js';

/** A memo that records what it is handed. */
function recordingMemo(): StoreMemo & { readonly writes: [string, readonly string[], unknown][] } {
  const writes: [string, readonly string[], unknown][] = [];
  return {
    writes,
    read: (_key, _tables, load) => load(),
    write: (key, tables, value) => void writes.push([key, tables, value]),
    peek: () => undefined,
  };
}

const resolver = (over: Partial<OwnershipResolver> = {}): OwnershipResolver => ({
  kind: 'object',
  tables: ['om_objects'],
  keyed: true,
  ownerOf: async () => null,
  ownedBy: async () => [],
  ...over,
});
const owned: OwnedResource = { body: 'obj_1', owner: 'pid_1', rights: ['read'], since: '2030-01-01T00:00:00.000Z' };

describe('rememberOwner', () => {
  it("[K-9.29] hands a keyed resolver's owner to the memo under the engine's key, kept as found rows, frozen", () => {
    const memo = recordingMemo();
    rememberOwner({ memo }, resolver(), { ...owned });
    expect(memo.writes).toEqual([[ownerMemoKey('object', 'obj_1'), [foundRows('om_objects')], owned]]);
    expect(ownerMemoKey('object', 'obj_1')).toBe('owner:object:obj_1');
    expect(Object.isFrozen(memo.writes[0]![2])).toBe(true);
  });

  it('[K-9.29] hands nothing for a resolver that is not keyed or names no tables, or without a memo', () => {
    const memo = recordingMemo();
    rememberOwner({ memo }, resolver({ keyed: false }), owned);
    rememberOwner({ memo }, resolver({ tables: undefined }), owned);
    expect(memo.writes).toEqual([]);
    expect(() => rememberOwner({}, resolver(), owned)).not.toThrow();
  });
});
