// Shared by the tool tests beside each tool (src/tools/*.test.ts): a runtime of the plugin test kit with Object
// Memory, closed after each test, and the helpers every such test uses. Test-only: nothing in src imports it.
import type { HostObjectInput, Plugin } from '@libos/sdk';
import { openTestRuntime, type TestRuntime } from '@libos/testing';
import { afterEach } from 'vitest';
import type { ObjectMemoryService } from '../../objects-service.js';
import { objectMemory, type ObjectMemoryOptions } from '../../plugin.js';

const SKILL = 'agent-libos-object-memory';
type Args = Record<string, unknown>;

/**
 * Registers an `afterEach` that closes the test's runtime and returns the helpers. `open({ om, plugins })` starts a fresh
 * in-memory runtime (fake clock, sequential ids) with `objectMemory(om)` and any further `plugins` (e.g. one whose event
 * hooks inject a fault inside a call's transaction); `kit.t` is the open one.
 *
 * @example
 * const kit = objectMemoryToolTests();
 * it('creates', async () => {
 *   await kit.open();
 *   const P = await kit.agent();
 *   await kit.create(P, { type: 'plan', name: 'p', payload: {} });
 * });
 */
export function objectMemoryToolTests() {
  let current: TestRuntime | null = null;
  afterEach(async () => {
    await current?.close();
    current = null;
  });
  const t = (): TestRuntime => {
    if (!current) throw new Error('open() the test runtime first');
    return current;
  };
  const objects = <T>(fn: (svc: ObjectMemoryService) => Promise<T>): Promise<T> =>
    t().runtime.transaction((scope) => fn(scope.service<ObjectMemoryService>('objects')));
  const create = (pid: string, args: Args) => t().ok(pid, 'create_memory_object', args);
  const kit = {
    /** The open runtime (throws before `open()`). */
    get t(): TestRuntime {
      return t();
    },
    async open(opts: { readonly om?: ObjectMemoryOptions; readonly plugins?: readonly Plugin[] } = {}): Promise<TestRuntime> {
      current = await openTestRuntime({ plugins: [objectMemory(opts.om), ...(opts.plugins ?? [])] });
      return current;
    },
    /** A base-agent process with the Object Memory Skill loaded by the host (activation grants nothing). */
    agent: (goal = 'use object memory') => t().spawn({ goal, image: 'base-agent:v0', skills: [SKILL] }),
    /** Opens a runtime with two processes P and Q, and P's namespace `proj`. */
    async twoWithProj() {
      await kit.open();
      const P = await kit.agent('P');
      const Q = await kit.agent('Q');
      await t().ok(P, 'create_memory_namespace', { namespace: 'proj' });
      return { P, Q };
    },
    /** Runs host-side code against the objects service in one transaction. */
    objects,
    hostCreate: (owner: string, input: HostObjectInput) => objects((s) => s.createForProcess(owner, { attachToView: false, ...input })),
    inspect: async (oid: string) => (await objects((s) => s.inspect(oid)))!,
    roots: (pid: string) => objects((s) => s.viewRoots(pid)),
    list: (pid: string, args: Args = {}) => t().ok(pid, 'list_memory_namespace', args),
    read: (pid: string, args: Args) => t().ok(pid, 'read_memory_object', args),
    create,
    append: (pid: string, args: Args) => t().ok(pid, 'append_memory_object', args),
    /** A mutable `{ entries: [] }` plan named `ledger` in the caller's namespace. */
    ledger: (pid: string, extra: Args = {}) =>
      create(pid, { type: 'plan', name: 'ledger', payload: { entries: [] }, immutable: false, ...extra }),
  };
  return kit;
}
