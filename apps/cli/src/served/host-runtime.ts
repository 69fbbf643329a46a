import type { Runtime, wire } from '@libos/kernel';

/** Object metadata as `libos objects` lists it (never a payload). */
export type ObjectRow = wire.ObjectMetaInput & {
  readonly labels: Readonly<Record<string, unknown>> & { readonly sensitivity?: unknown };
};

/**
 * What the store-level commands (`ps`, `show`, `caps`, `grant`, `call`, `send`, `human`, `audit`, `events`,
 * `llm-calls`, `objects`, `skills`) need from a runtime: the local one they open, or a served store's through its
 * server (see `remote-host.ts`). Methods keep the Runtime's signatures and answers.
 */
export type HostRuntime = Pick<
  Runtime,
  | 'location'
  | 'processes'
  | 'process'
  | 'spawn'
  | 'budget'
  | 'call'
  | 'hasTool'
  | 'sendMessage'
  | 'grant'
  | 'revoke'
  | 'capabilities'
  | 'humanRequests'
  | 'answerHuman'
  | 'cancelHumanRequest'
  | 'skillCatalog'
  | 'audit'
  | 'events'
  | 'llmCalls'
  | 'signal'
> & {
  /** Object metadata, by namespace and/or owner pid (needs the Object Memory plugin). */
  listObjects(q: { readonly namespace?: string; readonly ownerPid?: string; readonly limit?: number }): Promise<ObjectRow[]>;
  /** Where the answers come from: this process's own runtime, or a server's URL. */
  readonly via: 'local' | { readonly url: string; readonly pid: number };
};

interface ObjectLister {
  listObjects(q: { readonly namespace?: string; readonly ownerPid?: string; readonly limit?: number }): Promise<ObjectRow[]>;
}

/** A local runtime as a HostRuntime (every method bound to it). */
export function localHost(rt: Runtime): HostRuntime {
  return {
    via: 'local',
    location: rt.location,
    processes: () => rt.processes(),
    process: (pid) => rt.process(pid),
    spawn: (opts) => rt.spawn(opts),
    budget: (pid) => rt.budget(pid),
    call: (pid, tool, args, opts) => rt.call(pid, tool, args, opts),
    hasTool: (name) => rt.hasTool(name),
    sendMessage: (pid, payload, opts) => rt.sendMessage(pid, payload, opts),
    grant: (pid, resource, rights, opts) => rt.grant(pid, resource, rights, opts),
    revoke: (capId) => rt.revoke(capId),
    capabilities: (pid, opts) => rt.capabilities(pid, opts),
    humanRequests: (q) => rt.humanRequests(q),
    answerHuman: (id, answer) => rt.answerHuman(id, answer),
    cancelHumanRequest: (id, reason) => rt.cancelHumanRequest(id, reason),
    skillCatalog: () => rt.skillCatalog(),
    audit: (q) => rt.audit(q),
    events: (q) => rt.events(q),
    llmCalls: (q) => rt.llmCalls(q),
    signal: (pid, signal, reason) => rt.signal(pid, signal, reason),
    listObjects: (q) => rt.transaction((scope) => scope.service<ObjectLister>('objects').listObjects(q)),
  };
}
