import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, expectRefused, libosOn, tempStore } from '../testing/libos-bin.js';

let dir: string;
let db: string;
beforeAll(() => {
  assertBuilt();
  ({ dir, db } = tempStore('libos-objects-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('libos objects', { timeout: 120_000 }, () => {
  it('lists metadata by namespace or owner; a read in a reopened store fails closed with payload_unavailable_after_reopen', () => {
    const { run, json } = libosOn(db);
    const a = json('spawn', '--goal', 'keep a ledger').pid;
    const b = json('spawn', '--goal', 'other').pid;
    json('grant', a, 'skill:agent-libos-object-memory', 'execute');
    expect(run('call', a, 'activate_skill', '{"skill_id":"agent-libos-object-memory"}').code).toBe(0);
    expect(run('call', a, 'create_memory_object', '{"type":"plan","name":"ledger","payload":{"entries":[]},"immutable":false}').code).toBe(
      0,
    );

    const mine = json('objects', '--pid', a);
    expect(mine.map((o: { name: string }) => o.name).sort()).toEqual(['goal', 'ledger']);
    expect(mine.every((o: { payload_available: boolean }) => o.payload_available === false)).toBe(true);
    expect(Object.keys(mine[0]).sort()).toEqual([
      'created_at',
      'created_by',
      'immutable',
      'labels',
      'lifecycle',
      'metadata',
      'name',
      'namespace',
      'oid',
      'owner_id',
      'owner_kind',
      'payload_available',
      'provenance',
      'type',
      'updated_at',
      'version',
    ]);
    expect(json('objects', '--ns', `process:${b}`).map((o: { name: string }) => o.name)).toEqual(['goal']);
    const text = run('objects', '--pid', a);
    expect(text.stdout).toMatch(/ledger +plan +1 +unavailable +normal/);

    // Payloads are runtime-local: this CLI call opened the store anew, so the payload is gone and the read says so.
    const read = run('objects', 'read', 'ledger', '--pid', a);
    expectRefused(read, 1, 'payload_unavailable_after_reopen');
    // Unreadable looks like missing: b has no rights on a's scope.
    json('grant', b, 'skill:agent-libos-object-memory', 'execute');
    expect(run('call', b, 'activate_skill', '{"skill_id":"agent-libos-object-memory"}').code).toBe(0);
    expectRefused(run('objects', 'read', 'ledger', '--pid', b, '--ns', `process:${a}`), 1, 'namespace_denied');
  });

  it('objects read needs --pid; bad flags are usage errors', () => {
    const { run } = libosOn(db);
    expectRefused(run('objects', 'read', 'ledger'), 2, '--pid is required');
    expectRefused(run('objects', '--limit', '0'), 2, '--limit must be a positive integer');
  });
});
