import { canonicalSha256 } from '@libos/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { A, B, ops } from './internal/testing/helpers.js';
import { createTestStore, type TestStore } from './internal/testing/test-store.js';

let s: TestStore;
let o: ReturnType<typeof ops>;
beforeEach(async () => {
  s = await createTestStore();
  o = ops(s);
});
afterEach(() => s.close());

describe('authorize: candidates and precedence', () => {
  it('[CAP-1] subtree grant: allow, allow, missing', async () => {
    await o.grant({ subject: A, resource: 'filesystem:workspace:src/*', rights: ['read'] });
    expect((await o.check(A, 'filesystem:workspace:src/a.py', 'read')).effect).toBe('allow');
    expect((await o.check(A, 'filesystem:workspace:src', 'read')).effect).toBe('allow');
    expect((await o.check(A, 'filesystem:workspace:src2/a.py', 'read')).effect).toBe('missing');
  });

  it('[CAP-3] image:cc:* allows image:cc:v0, not image:ccX:v0', async () => {
    await o.grant({ subject: A, resource: 'image:cc:*', rights: ['read'] });
    expect((await o.check(A, 'image:cc:v0', 'read')).allowed).toBe(true);
    expect((await o.check(A, 'image:ccX:v0', 'read')).effect).toBe('missing');
  });

  it('[CAP-6] no implication: write or admin does not give read', async () => {
    await o.grant({ subject: A, resource: 'object:a', rights: ['write'] });
    await o.grant({ subject: B, resource: 'object:a', rights: ['admin'] });
    expect((await o.check(A, 'object:a', 'read')).effect).toBe('missing');
    expect((await o.check(B, 'object:a', 'read')).effect).toBe('missing');
    expect((await o.check(A, 'object:a', 'write')).effect).toBe('allow');
  });

  it('[CAP-7] broad allow + exact deny: deny, and the deny is selected', async () => {
    await o.grant({ subject: A, resource: 'filesystem:workspace:*', rights: ['read'] });
    const deny = await o.grant({ subject: A, resource: 'filesystem:workspace:s.txt', rights: ['read'], effect: 'deny' });
    const d = await o.check(A, 'filesystem:workspace:s.txt', 'read');
    expect(d.effect).toBe('deny');
    expect(d.allowed).toBe(false);
    expect(d.selectedId).toBe(deny.id);
    expect(d.policy).toBe('always_deny');
    expect((await o.check(A, 'filesystem:workspace:t.txt', 'read')).effect).toBe('allow');
  });

  it('[CAP-8] a broad deny beats a newer exact allow', async () => {
    await o.grant({ subject: A, resource: 'object:*', rights: ['read'], effect: 'deny' });
    s.clock.advance(1000);
    await o.grant({ subject: A, resource: 'object:a', rights: ['read'] });
    expect((await o.check(A, 'object:a', 'read')).effect).toBe('deny');
  });

  it('[CAP-9] ask + allow on the same resource: ask, policy ask_each_time', async () => {
    await o.grant({ subject: A, resource: 'object:a', rights: ['read'] });
    const ask = await o.grant({ subject: A, resource: 'object:a', rights: ['read'], effect: 'ask' });
    const d = await o.check(A, 'object:a', 'read');
    expect(d).toMatchObject({ effect: 'ask', policy: 'ask_each_time', allowed: false, selectedId: ask.id });
    await expect(o.require(A, 'object:a', 'read')).rejects.toMatchObject({ code: 'approval_required' });
  });

  it('[CAP-10] unknown constraint key fails closed: deny record ⇒ deny; lone allow ⇒ missing', async () => {
    // Records written by a newer version: the key is unknown to this registry (issue would refuse it).
    const raw = async (id: string, effect: string) =>
      s.db
        .insertInto('cap_grants')
        .values({
          id,
          subject: A,
          resource: 'object:a',
          kind: 'object',
          rights: '["read"]',
          effect,
          issuer: 'host',
          issuer_cap_id: null,
          parent_cap_id: null,
          depth: 0,
          max_depth: null,
          issued_at: s.clock.now().toISOString(),
          expires_at: null,
          uses_remaining: null,
          status: 'active',
          revoke_cause: null,
          delegable: 0,
          revocable: 1,
          constraints: '{"future_key":1}',
          metadata: '{}',
          revoked_at: null,
        })
        .execute();
    await raw('cap_raw_allow', 'allow');
    const lone = await o.check(A, 'object:a', 'read');
    expect(lone.effect).toBe('missing');
    expect(lone.reason).toMatch(/constraints rejected/);
    await raw('cap_raw_deny', 'deny');
    await o.grant({ subject: A, resource: 'object:a', rights: ['read'] });
    const d = await o.check(A, 'object:a', 'read');
    expect(d).toMatchObject({ effect: 'deny', selectedId: 'cap_raw_deny' });
  });

  it('[CAP-10] issue refuses unknown constraint keys and oversized constraints', async () => {
    await expect(o.grant({ subject: A, resource: 'object:a', rights: ['read'], constraints: { future_key: 1 } })).rejects.toMatchObject({
      code: 'capability_invalid',
    });
    await expect(
      o.grant({
        subject: A,
        resource: 'object:a',
        rights: ['read'],
        constraints: {
          shell_policy_level: 'x',
          authority_rules: [{ ruleId: 'r', operation: 'o', effect: 'deny', conditions: { equals: { k: 'x'.repeat(17000) } } }],
        },
      }),
    ).rejects.toThrowError(/16384 bytes/);
  });

  it('[CAP-11] a deny rule scoped by argv prefix: git status allowed, git push denied', async () => {
    await o.grant({ subject: A, resource: 'shell:git', rights: ['execute'] });
    await o.grant({
      subject: A,
      resource: 'shell:git',
      rights: ['execute'],
      effect: 'deny',
      constraints: {
        authority_rules: [{ ruleId: 'no-push', operation: 'shell.exec', effect: 'deny', conditions: { argvPrefix: ['git', 'push'] } }],
      },
    });
    expect((await o.check(A, 'shell:git', 'execute', { operation: 'shell.exec', argv: ['git', 'status'] })).effect).toBe('allow');
    expect((await o.check(A, 'shell:git', 'execute', { operation: 'shell.exec', argv: ['git', 'push', 'origin'] })).effect).toBe('deny');
    // No operation named: a rule-bearing deny fails closed.
    expect((await o.check(A, 'shell:git', 'execute')).effect).toBe('deny');
  });

  it('a malformed rule denies even on an allow record', async () => {
    await s.db
      .insertInto('cap_grants')
      .values({
        id: 'cap_bad_rule',
        subject: A,
        resource: 'object:a',
        kind: 'object',
        rights: '["read"]',
        effect: 'allow',
        issuer: 'host',
        issuer_cap_id: null,
        parent_cap_id: null,
        depth: 0,
        max_depth: null,
        issued_at: s.clock.now().toISOString(),
        expires_at: null,
        uses_remaining: null,
        status: 'active',
        revoke_cause: null,
        delegable: 0,
        revocable: 1,
        constraints: '{"authority_rules":[{"ruleId":"x"}]}',
        metadata: '{}',
        revoked_at: null,
      })
      .execute();
    expect((await o.check(A, 'object:a', 'read', { operation: 'x' })).effect).toBe('deny');
  });

  it("[CAP-12] another subject's record never decides, even when passed in", async () => {
    const recB = await o.grant({ subject: B, resource: 'object:a', rights: ['read'] });
    const d = await s.run((scope) => s.engine.authorizeWithCandidates(scope, A, 'object:a', 'read', [recB]));
    expect(d.allowed).toBe(false);
    expect(d.selectedId).toBeUndefined();
    expect(d.matchedIds).toEqual([]);
  });

  it('ties: longest resource, then newest, then smallest id', async () => {
    const broad = await o.grant({ subject: A, resource: 'object:*', rights: ['read'] });
    const exact = await o.grant({ subject: A, resource: 'object:a', rights: ['read'] });
    expect((await o.check(A, 'object:a', 'read')).selectedId).toBe(exact.id);
    s.clock.advance(5);
    const newer = await o.grant({ subject: A, resource: 'object:a', rights: ['read'] });
    const d = await o.check(A, 'object:a', 'read');
    expect(d.selectedId).toBe(newer.id);
    expect(d.matchedIds).toEqual([newer.id, exact.id, broad.id]);
  });

  it('invalid inputs name the bad value', async () => {
    await expect(o.check(A, 'nokind', 'read')).rejects.toMatchObject({ code: 'resource_invalid' });
    await expect(o.check(A, 'object:a', 'delegate' as never)).rejects.toMatchObject({ code: 'rights_invalid' });
  });

  it('[CAP-56] require writes one capability.authorize audit with ids and chain, never payload text', async () => {
    const g = await o.grant({ subject: A, resource: 'object:*', rights: ['read'] });
    const argsHash = canonicalSha256({ text: 'the secret payload' });
    s.audit.length = 0;
    await o.require(A, 'object:a', 'read', { operation: 'tool:read_memory_object', argsHash });
    const entries = s.audit.filter((e) => e.action === 'capability.authorize');
    expect(entries).toHaveLength(1);
    expect(entries[0]!.details).toMatchObject({ matchedIds: [g.id], selectedId: g.id, issuerChain: [{ capId: g.id, issuer: 'host' }] });
    expect(JSON.stringify(s.audit)).not.toContain('the secret payload');
    expect(JSON.stringify(s.audit)).toContain(argsHash);
  });

  it("require throws permission_denied for missing and deny, or the caller's code", async () => {
    await expect(o.require(A, 'object:a', 'read')).rejects.toMatchObject({
      code: 'permission_denied',
      details: { resource: 'object:a', right: 'read' },
    });
    await expect(
      s.run((scope) => s.engine.authority(scope, A).require('object:a', 'read', { code: 'object_denied' })),
    ).rejects.toMatchObject({ code: 'object_denied' });
  });
});

describe('per-use approvals (approval_binding)', () => {
  it('[CAP-37] ask, then approve: the identical call is allowed once; changed args ask again', async () => {
    await o.grant({ subject: A, resource: 'object:a', rights: ['write'], effect: 'ask' });
    const args = { field: 'notes', value: 'x' };
    const argsHash = canonicalSha256(args);
    const op = { operation: 'tool:append_memory_object', argsHash, effectId: 'eff_1', targetStateVersion: 3 };
    expect((await o.check(A, 'object:a', 'write', op)).effect).toBe('ask');
    const approval = await s.run((scope) =>
      s.engine.approveOnce(
        scope,
        A,
        'object:a',
        'write',
        { canonicalArgsHash: argsHash, effectId: 'eff_1', targetStateVersion: 3 },
        'human:owner',
      ),
    );
    const d = await o.require(A, 'object:a', 'write', op);
    expect(d).toMatchObject({ effect: 'allow', selectedId: approval.id, consumeId: approval.id, policy: 'allow_once' });
    expect(await o.get(approval.id)).toMatchObject({ usesRemaining: 0, status: 'revoked', revokeCause: 'exhausted' });
    expect((await o.check(A, 'object:a', 'write', op)).effect).toBe('ask');
    // A second approval does not serve different arguments or a changed target state.
    await s.run((scope) =>
      s.engine.approveOnce(scope, A, 'object:a', 'write', { canonicalArgsHash: argsHash, targetStateVersion: 3 }, 'human:owner'),
    );
    expect((await o.check(A, 'object:a', 'write', { ...op, argsHash: canonicalSha256({ ...args, value: 'y' }) })).effect).toBe('ask');
    expect((await o.check(A, 'object:a', 'write', { ...op, targetStateVersion: 4 })).effect).toBe('ask');
    expect((await o.check(A, 'object:a', 'write', op)).effect).toBe('allow');
  });

  it('a bound approval never overrides a deny', async () => {
    await o.grant({ subject: A, resource: 'object:a', rights: ['write'], effect: 'deny' });
    const argsHash = canonicalSha256({ a: 1 });
    await s.run((scope) => s.engine.approveOnce(scope, A, 'object:a', 'write', { canonicalArgsHash: argsHash }, 'human:owner'));
    expect((await o.check(A, 'object:a', 'write', { argsHash })).effect).toBe('deny');
  });
});
