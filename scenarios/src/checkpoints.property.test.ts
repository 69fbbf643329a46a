import fc from 'fast-check';
import type { Runtime } from '@libos/kernel';
import { expect, it } from 'vitest';
import { asHost, checkpointAgent, openCheckpointHarness } from './support/checkpoints-harness.js';
import { ok, type Json } from './support/kernel-harness.js';

// [CP-16] For random sequences of creates, appends, grants, revokes, checkpoints and restores, the state after a restore
// is the state at its checkpoint (each Object's version and payload digest, the set of live Objects, the active grants
// less any revoked since), and the audit log only grows.

const NAMES = ['a', 'b', 'c'] as const;
const op = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), name: fc.constantFrom(...NAMES), n: fc.integer({ min: 0, max: 99 }) }),
  fc.record({ kind: fc.constant('append' as const), name: fc.constantFrom(...NAMES), n: fc.integer({ min: 0, max: 99 }) }),
  fc.record({ kind: fc.constant('grant' as const), n: fc.integer({ min: 0, max: 5 }) }),
  fc.record({ kind: fc.constant('revoke' as const), n: fc.nat() }),
  fc.record({ kind: fc.constant('checkpoint' as const) }),
  fc.record({ kind: fc.constant('restore' as const), n: fc.nat() }),
);

interface State {
  readonly objects: Record<string, { version: number; sha256: string }>;
  readonly grants: readonly string[];
}

async function stateOf(rt: Runtime, pid: string): Promise<State> {
  const listed = (await rt.transaction(async (scope) =>
    (scope.service('objects') as Json).listObjects({ namespace: `process:${pid}`, limit: 1000 }),
  )) as Json[];
  const objects: State['objects'] = {};
  for (const o of listed) {
    const r = await rt.call(pid, 'read_memory_object', { name: o.name });
    objects[o.name] = { version: o.version, sha256: r.ok ? (r.payload as Json).sha256 : `unavailable:${r.error.code}` };
  }
  const grants = (await rt.capabilities(pid))
    .filter((g) => !g.id.startsWith('cap_own:'))
    .map((g) => g.id)
    .sort();
  return { objects, grants };
}

it("[CP-16] property: a restore gives back the checkpoint's state (Objects, versions, digests, grants); the audit only grows", async () => {
  await fc.assert(
    // Every run checkpoints between two random stretches and ends restoring some checkpoint; more may come in between.
    fc.asyncProperty(
      fc.array(op, { maxLength: 8 }),
      fc.array(op, { minLength: 1, maxLength: 8 }),
      fc.nat(),
      async (before, after, last) => {
        const ops = [...before, { kind: 'checkpoint' as const }, ...after, { kind: 'restore' as const, n: last }];
        let restores = 0;
        const { rt } = await openCheckpointHarness();
        try {
          const pid = await checkpointAgent(rt);
          const checkpoints: { id: string; state: State }[] = [];
          const issued: string[] = [];
          const revoked = new Set<string>();
          let audit = (await rt.audit({ limit: 100_000 })).map((a) => a.id);
          for (const o of ops) {
            if (o.kind === 'create') {
              const r = await rt.call(pid, 'create_memory_object', {
                type: 'plan',
                name: o.name,
                payload: { entries: [o.n] },
                immutable: false,
              });
              if (!r.ok) expect(r.error.code).toBe('object_name_exists');
            } else if (o.kind === 'append') {
              const r = await rt.call(pid, 'append_memory_object', { name: o.name, entry: o.n });
              if (!r.ok) expect(r.error.code).toBe('object_not_found');
            } else if (o.kind === 'grant') {
              issued.push((await rt.grant(pid, `file:f${o.n}`, ['write'])).id);
            } else if (o.kind === 'revoke') {
              const live = issued.filter((g) => !revoked.has(g));
              if (live.length) {
                const id = live[o.n % live.length]!;
                await rt.revoke(id);
                revoked.add(id);
              }
            } else if (o.kind === 'checkpoint') {
              const state = await stateOf(rt, pid);
              checkpoints.push({ id: (await ok(rt, pid, 'create_checkpoint', {})).checkpoint_id, state });
            } else if (checkpoints.length) {
              const k = checkpoints[o.n % checkpoints.length]!;
              await asHost(rt, (cps) => cps.restore('host', k.id));
              // A grant issued after the checkpoint is revoked by the restore.
              for (const g of issued) if (!k.state.grants.includes(g)) revoked.add(g);
              const now = await stateOf(rt, pid);
              expect(now.objects).toEqual(k.state.objects);
              expect(now.grants).toEqual(k.state.grants.filter((g) => !revoked.has(g)));
              const grown = (await rt.audit({ limit: 100_000 })).map((a) => a.id);
              expect(grown.slice(0, audit.length)).toEqual(audit);
              expect(grown.length).toBeGreaterThan(audit.length);
              audit = grown;
              restores++;
            }
          }
          expect(restores).toBeGreaterThan(0);
        } finally {
          await rt.close();
        }
      },
    ),
    { numRuns: 25 },
  );
});
