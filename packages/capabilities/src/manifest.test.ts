import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { A, B, ops } from './internal/testing/helpers.js';
import { createTestStore, type TestStore } from './internal/testing/test-store.js';
import { parseManifest } from './manifest.js';

let s: TestStore;
let o: ReturnType<typeof ops>;
beforeEach(async () => {
  s = await createTestStore();
  o = ops(s);
});
afterEach(() => s.close());

const parentManifest = {
  authorized_capabilities: [{ resource: 'object:*', rights: ['read', 'write'], delegable: true }],
  permitted_effects: ['filesystem.read', 'network.*'],
  resource_budget: { tool_calls: 50 },
  data_flow_policy: { allowed_tenants: ['acme'], allowed_principals: [] },
  expires_at: '2030-06-01T00:00:00Z',
  issued_by: 'host',
};
const bind = (pid: string, m: unknown, parentPid?: string, imageRequirements?: { resource: string; rights: string[] }[]) =>
  s.run((scope) =>
    s.engine.bindManifest(scope, pid, m, { ...(parentPid ? { parentPid } : {}), ...(imageRequirements ? { imageRequirements } : {}) }),
  );

describe('task authority manifest', () => {
  it('parses a closed schema: unknown fields reject, naming the path; the hash is canonical', () => {
    expect(() => parseManifest({ ...parentManifest, surprise: 1 })).toThrowError(expect.objectContaining({ code: 'invalid_arguments' }));
    expect(() =>
      parseManifest({ ...parentManifest, authorized_capabilities: [{ resource: 'object:*', rights: ['delegate'] }] }),
    ).toThrowError(/manifest\.authorized_capabilities\.0\.rights/);
    const a = parseManifest(parentManifest);
    const b = parseManifest(Object.fromEntries(Object.entries(parentManifest).reverse()));
    expect(a.sha256).toBe(b.sha256);
    expect(a.manifest.expires_at).toBe('2030-06-01T00:00:00.000Z');
  });

  it('[CAP-57] compiles only authorized capabilities; image requirements are never granted', async () => {
    const { records, manifest } = await bind(A, parentManifest, undefined, [{ resource: 'shell:*', rights: ['execute'] }]);
    expect(records.map((r) => [r.resource, r.rights, r.issuer, r.expiresAt])).toEqual([
      ['object:*', ['read', 'write'], `authority_manifest:${manifest.id}`, '2030-06-01T00:00:00.000Z'],
    ]);
    expect((await o.check(A, 'shell:ls', 'execute')).effect).toBe('missing');
    expect(s.audit.find((e) => e.action === 'authority_manifest.bind')!.details).toMatchObject({
      manifestSha256: manifest.sha256,
      imageRequirementsDeclared: [{ resource: 'shell:*' }],
    });
    await expect(bind(A, parentManifest)).rejects.toMatchObject({ code: 'conflict' });
  });

  it('[CAP-57] a child manifest that widens budget, effects, expiry or tenants is denied', async () => {
    await bind(A, parentManifest);
    const child = {
      ...parentManifest,
      authorized_capabilities: [{ resource: 'object:a', rights: ['read'] }],
      resource_budget: { tool_calls: 10 },
      permitted_effects: ['network.http'],
      expires_at: '2030-05-01T00:00:00Z',
    };
    const widen: [string, unknown][] = [
      ['resource_budget', { ...child, resource_budget: { tool_calls: 51 } }],
      ['resource_budget', { ...child, resource_budget: { tool_calls: null } }],
      ['permitted_effects', { ...child, permitted_effects: ['filesystem.write'] }],
      ['permitted_effects', { ...child, permitted_effects: null }],
      ['expires_at', { ...child, expires_at: '2030-07-01T00:00:00Z' }],
      ['expires_at', { ...child, expires_at: null }],
      ['data_flow_policy', { ...child, data_flow_policy: { allowed_tenants: ['acme', 'other'], allowed_principals: [] } }],
      ['authorized_capabilities', { ...child, authorized_capabilities: [{ resource: 'object:a', rights: ['admin'] }] }],
    ];
    for (const [field, m] of widen)
      await expect(bind(B, m, A), field).rejects.toMatchObject({ code: 'delegation_denied', message: expect.stringContaining(field) });
    expect(await o.list(B, true)).toHaveLength(0);
    await bind(B, child, A);
    expect((await o.check(B, 'object:a', 'read')).allowed).toBe(true);
  });

  it('[CAP-57] permitted effects: [] blocks all, null is unrestricted, patterns match by segment; expiry denies', async () => {
    await bind(A, { ...parentManifest, permitted_effects: [] });
    await bind(B, parentManifest);
    const ok = (pid: string, e: string) => s.run((scope) => s.engine.effectPermitted(scope, pid, e));
    expect(await ok(A, 'filesystem.read')).toBe(false);
    expect(await ok(B, 'filesystem.read')).toBe(true);
    expect(await ok(B, 'network.http')).toBe(true);
    expect(await ok(B, 'networkx.http')).toBe(false);
    expect(await ok(B, 'filesystem.write')).toBe(false);
    expect(await ok('pid_without_manifest', 'anything.at_all')).toBe(true);
    s.clock.set('2030-06-01T00:00:00Z');
    expect(await ok(B, 'filesystem.read')).toBe(false);
    expect((await o.check(B, 'object:a', 'read')).effect).toBe('missing');
  });
});
