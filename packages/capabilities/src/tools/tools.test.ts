import {
  isToolWait,
  type HumanRequest,
  type HumanService,
  type ProcessService,
  type ProcessSummary,
  type ServiceScope,
  type ToolContext,
  type WaitSpec,
} from '@libos/sdk';
import { systemClock, ToolWait } from '@libos/sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { permissionEffect } from '../permission-requests.js';
import { capabilities } from '../plugin.js';
import { A, B, C, ops } from '../internal/testing/helpers.js';
import { createTestStore, type TestStore } from '../internal/testing/test-store.js';
import { delegateCapability } from './delegate-capability.js';
import { listCapabilities } from './list-capabilities.js';
import { requestPermission } from './request-permission.js';
import { revokeCapability } from './revoke-capability.js';

let s: TestStore;
let o: ReturnType<typeof ops>;
const processes = new Map<string, ProcessSummary>();
const humanRequests = new Map<string, HumanRequest>();
beforeEach(async () => {
  s = await createTestStore();
  o = ops(s);
  processes.clear();
  humanRequests.clear();
  for (const [pid, parentPid, status] of [
    [A, null, 'running'],
    [B, A, 'runnable'],
    [C, B, 'exited'],
  ] as const) {
    processes.set(pid, { pid, parentPid, imageId: 'base-agent:v0', status, goalOid: null, imageMetadata: {}, toolTable: [] });
  }
});
afterEach(() => s.close());

const humans: HumanService = {
  async create(pid, req) {
    const r: HumanRequest = {
      id: `hr_${humanRequests.size + 1}`,
      pid,
      kind: req.kind,
      prompt: req.prompt,
      status: 'pending',
      details: req.details ?? {},
      response: null,
      createdAt: '',
      answeredAt: null,
    };
    humanRequests.set(r.id, r);
    return r;
  },
  get: async (id) => humanRequests.get(id) ?? null,
  output: async () => {
    throw new Error('not used');
  },
};
const procs: ProcessService = {
  async get(pid) {
    const p = processes.get(pid);
    if (!p) throw new Error(`no process ${pid}`);
    return p;
  },
  exit: async () => {
    throw new Error('not used');
  },
  humanMessages: async () => {
    throw new Error('not used');
  },
  observedSuccessfulTools: async () => {
    throw new Error('not used');
  },
  spawnChild: async () => {
    throw new Error('not used');
  },
  recordedExitPayload: async () => {
    throw new Error('not used');
  },
  savedCalls: async () => {
    throw new Error('not used');
  },
};

/** Runs one tool call as `pid` in its own transaction, with the kernel's services faked (a wait commits, then throws). */
async function call(
  tool: { run(args: never, ctx: ToolContext): unknown; input: { parse(v: unknown): unknown } },
  pid: string,
  args: unknown,
  resumed = false,
): Promise<unknown> {
  return s
    .run(async (scope: ServiceScope) => {
      const ctx: ToolContext = {
        ...scope,
        service<T>(name: string): T {
          if (name === 'processes') return procs as T;
          if (name === 'human') return humans as T;
          return scope.service<T>(name);
        },
        pid,
        callId: 'call_1',
        toolName: 'x',
        authority: s.engine.authority(scope, pid),
        budgets: s.engine.budgets(scope),
        flow: s.engine.flow(scope, pid),
        signal: new AbortController().signal,
        resumed,
        wait(spec: WaitSpec): never {
          throw new ToolWait(spec);
        },
      };
      // Like the broker: a wait commits the call's transaction, then parks the process.
      try {
        return await tool.run(tool.input.parse(args) as never, ctx);
      } catch (err) {
        if (isToolWait(err)) return err;
        throw err;
      }
    })
    .then((r) => {
      if (isToolWait(r)) throw r;
      return r;
    });
}

describe('authority tools', () => {
  it('the plugin ships the Skill and its four tools', () => {
    const p = capabilities();
    expect(p.tools.map((t) => t.name)).toEqual(['list_capabilities', 'request_permission', 'delegate_capability', 'revoke_capability']);
    expect(p.skills[0]!.text).toContain('allowed-tools: list_capabilities request_permission delegate_capability revoke_capability');
    expect(Object.keys(p.services ?? {})).toEqual(['capabilities']);
  });

  it('the plugin refuses options it could not honour (the kernel runs the engine with the runtime clock and ids)', () => {
    expect(() => capabilities({ engine: s.engine } as never)).toThrow(
      expect.objectContaining({ code: 'invalid_arguments', details: { field: 'engine', accepted: [] } }),
    );
    expect(() => capabilities({ clock: systemClock } as never)).toThrow(/option "clock" is not accepted/);
  });

  it("list_capabilities shows only the caller's grants", async () => {
    await o.grant({ subject: A, resource: 'object:a', rights: ['read'] });
    await o.grant({ subject: B, resource: 'object:b', rights: ['read'] });
    const out = (await call(listCapabilities, A, {})) as { capabilities: { resource: string }[] };
    expect(out.capabilities.map((c) => c.resource)).toEqual(['object:a']);
  });

  it('delegate_capability reaches only a live direct child', async () => {
    const p = await o.grant({ subject: A, resource: 'object:*', rights: ['read', 'write'], delegable: true });
    await expect(
      call(delegateCapability, A, { child_pid: C, capability_id: p.id, resource: 'object:a', rights: ['read'] }),
    ).rejects.toMatchObject({ code: 'not_direct_child' });
    const q = await o.grant({ subject: B, resource: 'object:*', rights: ['read'], delegable: true });
    await expect(
      call(delegateCapability, B, { child_pid: C, capability_id: q.id, resource: 'object:a', rights: ['read'] }),
    ).rejects.toMatchObject({ code: 'not_direct_child' });
    const out = (await call(delegateCapability, A, { child_pid: B, capability_id: p.id, resource: 'object:a', rights: ['read'] })) as {
      capability_id: string;
    };
    expect((await o.check(B, 'object:a', 'read')).selectedId).toBe(out.capability_id);
    // Someone else's grant id is not the caller's to delegate.
    await expect(
      call(delegateCapability, A, { child_pid: B, capability_id: q.id, resource: 'object:a', rights: ['read'] }),
    ).rejects.toMatchObject({ code: 'delegation_denied' });
  });

  it('revoke_capability revokes what the caller issued, not what it merely sees', async () => {
    const p = await o.grant({ subject: A, resource: 'object:*', rights: ['read'], delegable: true });
    const child = await s.run((scope) => s.engine.delegate(scope, p.id, B, { resource: 'object:a', rights: ['read'] }, A));
    await expect(call(revokeCapability, B, { capability_id: p.id })).rejects.toMatchObject({ code: 'permission_denied' });
    await call(revokeCapability, A, { capability_id: child.id });
    expect((await o.check(B, 'object:a', 'read')).effect).toBe('missing');
  });

  it('[CAP-39] privileged or broad requests are refused before any prompt', async () => {
    await o.grant({ subject: A, resource: 'human:owner', rights: ['write'] });
    for (const [resource, rights] of [
      ['capability:*', ['admin']],
      ['shell:*', ['execute']],
      ['filesystem:*', ['write']],
      ['filesystem:workspace:*', ['delete']],
    ] as const) {
      await expect(call(requestPermission, A, { resource, rights, reason: 'please' }), resource).rejects.toMatchObject({
        code: 'permission_denied',
      });
    }
    expect(humanRequests.size).toBe(0);
  });

  it('[CAP-38] a request outside the manifest ceiling is denied with no human request', async () => {
    await s.run((scope) =>
      s.engine.bindManifest(scope, A, {
        authorized_capabilities: [{ resource: 'human:owner', rights: ['write'] }],
        permitted_effects: null,
        approval_policy: { requestable_capabilities: [{ resource: 'object:*', rights: ['read'] }] },
        issued_by: 'host',
      }),
    );
    await expect(call(requestPermission, A, { resource: 'object:a', rights: ['write'], reason: 'need to edit' })).rejects.toMatchObject({
      code: 'permission_denied',
      message: expect.stringContaining('ceiling'),
    });
    expect(humanRequests.size).toBe(0);
    await expect(call(requestPermission, A, { resource: 'object:a', rights: ['read'], reason: 'need to read' })).rejects.toSatisfy(
      isToolWait,
    );
    expect(humanRequests.size).toBe(1);
  });

  it('needs human:<name> write, spent when queued; the answer installs one record for the caller', async () => {
    await expect(call(requestPermission, A, { resource: 'object:a', rights: ['read'], reason: 'r' })).rejects.toMatchObject({
      code: 'permission_denied',
    });
    const w = await o.grant({ subject: A, resource: 'human:owner', rights: ['write'], usesRemaining: 1 });
    const wait = await call(requestPermission, A, { resource: 'object:a', rights: ['read'], reason: 'r' }).catch((e: unknown) => e);
    expect(isToolWait(wait)).toBe(true);
    expect((wait as ToolWait).wait).toEqual({ kind: 'human', request_ids: ['hr_1'] });
    expect(await o.get(w.id)).toMatchObject({ usesRemaining: 0 });
    expect(humanRequests.get('hr_1')!.details).toMatchObject({ resource: 'object:a', rights: ['read'] });
    // Still pending: the resumed call waits again.
    await expect(call(requestPermission, A, { resource: 'object:a', rights: ['read'], reason: 'r' }, true)).rejects.toSatisfy(isToolWait);
    humanRequests.set('hr_1', {
      ...humanRequests.get('hr_1')!,
      status: 'approved',
      response: { approved: true, decision: 'ask_each_time', responder: 'human:owner' },
    });
    const out = await call(requestPermission, A, { resource: 'object:a', rights: ['read'], reason: 'r' }, true);
    expect(out).toEqual({ request_id: 'hr_1', resource: 'object:a', rights: ['read'], status: 'approved' });
    const d = await o.check(A, 'object:a', 'read');
    expect(d).toMatchObject({ effect: 'ask' });
    await call(requestPermission, A, { resource: 'object:a', rights: ['read'], reason: 'r' }, true);
    expect((await o.list(A)).filter((r) => r.metadata.human_request_id === 'hr_1')).toHaveLength(1);
    expect(s.audit.filter((e) => e.action === 'capability.permission_policy')).toHaveLength(1);
  });

  it('[CAP-40] two answers to one request install exactly one record', async () => {
    const req = { requestId: 'hr_9', pid: A, resource: 'object:a', rights: ['read'] };
    const [x, y] = await Promise.all([
      s.run((scope) =>
        s.engine.applyPermissionDecision(scope, req, { approved: true, decision: 'always_allow', responder: 'human:owner' }),
      ),
      s.run((scope) =>
        s.engine.applyPermissionDecision(scope, req, { approved: false, decision: 'always_deny', responder: 'human:owner' }),
      ),
    ]);
    expect(x.id).toBe(y.id);
    expect((await o.list(A, true)).filter((r) => r.metadata.human_request_id === 'hr_9')).toHaveLength(1);
    expect(x.subject).toBe(A);
  });

  it('[CAP-41] the subject of a request is always the caller: a named victim gets nothing', async () => {
    await o.grant({ subject: A, resource: 'human:owner', rights: ['write'] });
    await expect(call(requestPermission, A, { resource: 'object:a', rights: ['read'], reason: 'r', subject: B })).rejects.toSatisfy(
      isToolWait,
    );
    const id = [...humanRequests.keys()][0]!;
    humanRequests.set(id, {
      ...humanRequests.get(id)!,
      status: 'approved',
      response: { approved: true, decision: 'always_allow', responder: 'human:owner' },
    });
    await call(requestPermission, A, { resource: 'object:a', rights: ['read'], reason: 'r', subject: B }, true);
    expect((await o.check(A, 'object:a', 'read')).allowed).toBe(true);
    expect(await o.list(B, true)).toHaveLength(0);
  });

  it('[CAP-36] contradictory answers are invalid', () => {
    expect(() => permissionEffect(true, 'always_deny')).toThrowError(expect.objectContaining({ code: 'invalid_arguments' }));
    expect(() => permissionEffect(false, 'always_allow')).toThrowError(expect.objectContaining({ code: 'invalid_arguments' }));
    expect(() => permissionEffect(true, 'allow_once')).toThrowError(expect.objectContaining({ code: 'invalid_arguments' }));
    expect([permissionEffect(true, undefined), permissionEffect(false, undefined), permissionEffect(false, 'ask_each_time')]).toEqual([
      'allow',
      'deny',
      'ask',
    ]);
  });
});
