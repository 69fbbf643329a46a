import { errorFromResponse, LibosApiError, LibosClient } from '@libos/client';
import { wire, type Runtime } from '@libos/kernel';
import { defineErrorCodes, ERROR_CATEGORIES, errorCategoryOf, isLibosError, LibosError, type ErrorCategory } from '@libos/sdk';
import type { HostRuntime, ObjectRow } from './host-runtime.js';
import type { ServedStore } from './served-file.js';

/**
 * A server's error as this process's LibosError: same code, message and details. A code only the server knows (a
 * plugin's) is declared here under the category the server gave it, so the exit code and `--json` output match.
 */
function localError(err: LibosApiError): LibosError {
  if (errorCategoryOf(err.code) === undefined && (ERROR_CATEGORIES as readonly string[]).includes(err.category)) {
    defineErrorCodes('libos serve (remote)', { [err.code]: err.category as ErrorCategory });
  }
  if (errorCategoryOf(err.code) === undefined)
    return new LibosError('internal_error', `${err.code}: ${err.message}`, { details: { remote_code: err.code } });
  return new LibosError(err.code, err.message, err.details ? { details: err.details } : {});
}

/** Runs one request; the server's refusal becomes a LibosError, a server that does not answer is `store_locked`. */
async function remote<T>(served: ServedStore, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof LibosApiError) throw localError(err);
    if (isLibosError(err)) throw err;
    const why = err instanceof Error ? err.message : String(err);
    const message =
      `store ${served.db} is served by libos serve (pid ${served.pid}) at ${served.url}, which did not answer ` +
      `(${why}); stop it or retry`;
    throw new LibosError('store_locked', message, {
      details: { path: served.db, url: served.url, pid: served.pid, unreachable: true },
      cause: err,
    });
  }
}

const str = (v: number | undefined) => (v === undefined ? undefined : String(v));
/** A query object without its undefined entries (Hono's client would send them as text). */
function query<T extends Record<string, string | undefined>>(q: T): { [K in keyof T]: string } {
  return Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined)) as { [K in keyof T]: string };
}

/**
 * The served store's runtime as a HostRuntime, through its server (`@libos/client`): the commands a person types are
 * explicit, so high-risk operations go with `confirmed: true`. The Skill catalog and tool names are read once here
 * (the CLI asks for them synchronously). Fails with `store_locked` when the server does not answer, or serves
 * another store than the record says.
 */
export async function remoteHost(served: ServedStore): Promise<HostRuntime> {
  const client = new LibosClient({ url: served.url, token: served.token });
  const api = client.routes.api;
  const json = async <T>(res: Response | Promise<Response>): Promise<T> => {
    const r = await res;
    if (!r.ok) throw await errorFromResponse(r);
    return (await r.json()) as T;
  };
  const call = <T>(fn: () => Promise<T>) => remote(served, fn);
  /** A listing route's wire records, each mapped back to the Runtime's type. */
  const list = <W, T>(get: () => unknown, fromWire: (w: W) => T) =>
    call(async () => (await json<W[]>(get() as Promise<Response>)).map((w) => fromWire(w)));
  const health = await call(() => client.health());
  if (health.db !== served.db) {
    const message =
      `store ${served.db}: the server recorded for it (pid ${served.pid}, ${served.url}) serves ${health.db}; ` +
      `remove the stale ${served.db}.serve.json`;
    throw new LibosError('store_locked', message, { details: { path: served.db, url: served.url, pid: served.pid } });
  }
  const catalog = (await call(() => json<wire.SkillWire[]>(api.skills.$get() as unknown as Promise<Response>))).map(wire.skillFromWire);
  const tools = new Set(await call(() => json<string[]>(api.tools.$get() as unknown as Promise<Response>)));
  // The server answers snake_case (the wire); the CLI works with the Runtime's camelCase types: mapped back here.
  const asProcess = (p: unknown) => wire.processFromWire(p as wire.ProcessWire);
  return {
    via: { url: served.url, pid: served.pid },
    location: health.db,
    processes: () => call(async () => (await client.processes()).map(asProcess)),
    process: (pid) =>
      call(async () => {
        const { budget: _budget, ...p } = (await client.process(pid)) as Record<string, unknown>;
        return asProcess(p);
      }),
    spawn: (opts) =>
      call(async () => {
        if (opts.parentPid !== undefined || opts.labels !== undefined || opts.llmProfileId !== undefined) {
          throw new LibosError(
            'invalid_arguments',
            'spawn: a served store spawns root processes only (goal, image, budget, working directory)',
          );
        }
        const body = {
          goal: opts.goal,
          ...(opts.image !== undefined ? { image: opts.image } : {}),
          ...(opts.budget !== undefined ? { budget: opts.budget } : {}),
          ...(opts.workingDirectory !== undefined ? { working_directory: opts.workingDirectory } : {}),
        };
        return asProcess(await json(api.processes.$post({ json: body }) as unknown as Promise<Response>));
      }),
    budget: (pid) => call(async () => wire.budgetFromWire((await client.process(pid)).budget as wire.BudgetWire)),
    call: (pid, tool, args = {}) =>
      call(
        async () =>
          (await client.call(pid, tool, args as Record<string, unknown>, { confirmed: true })) as unknown as Awaited<
            ReturnType<Runtime['call']>
          >,
      ),
    hasTool: (name) => tools.has(name),
    sendMessage: (pid, payload, opts = {}) =>
      call(async () => {
        const input = {
          payload,
          ...(opts.from !== undefined ? { from: opts.from } : {}),
          ...(opts.channel !== undefined ? { channel: opts.channel } : {}),
          ...(opts.kind !== undefined ? { kind: opts.kind } : {}),
          ...(opts.delivery === 'interrupt' ? { interrupt: true } : {}),
        };
        return wire.messageFromWire((await client.message(pid, input)) as wire.MessageWire);
      }),
    grant: (pid, resource, rights, opts = {}) =>
      call(async () => {
        const body = {
          resource,
          rights: [...rights],
          confirmed: true,
          ...(opts.effect !== undefined ? { effect: opts.effect } : {}),
          ...(opts.uses !== undefined ? { uses: opts.uses } : {}),
          ...(opts.expiresAt !== undefined ? { expires_at: opts.expiresAt } : {}),
          ...(opts.delegable !== undefined ? { delegable: opts.delegable } : {}),
        };
        const cap = await json<wire.CapabilityWire>(
          api.processes[':pid'].grants.$post({ param: { pid }, json: body }) as unknown as Promise<Response>,
        );
        return wire.capabilityFromWire(cap);
      }),
    revoke: (capId) =>
      call(async () => {
        await json(api.capabilities[':id'].revoke.$post({ param: { id: capId } }) as unknown as Promise<Response>);
      }),
    capabilities: (pid, opts = {}) =>
      call(async () =>
        ((await client.capabilities(pid, opts.includeInactive === true)) as wire.CapabilityWire[]).map(wire.capabilityFromWire),
      ),
    humanRequests: (q = {}) =>
      call(async () => ((await client.humanRequests(q)) as wire.HumanRequestWire[]).map(wire.humanRequestFromWire)),
    answerHuman: (id, answer) =>
      call(async () => {
        const input = {
          approved: answer.approved,
          ...(answer.answer !== undefined ? { answer: answer.answer } : {}),
          ...(answer.decision !== undefined ? { decision: { policy: answer.decision } } : {}),
          ...(answer.responder !== undefined ? { responder: answer.responder } : {}),
        };
        return wire.humanRequestFromWire((await client.respond(id, input)) as wire.HumanRequestWire);
      }),
    cancelHumanRequest: (id, reason) =>
      call(async () => wire.humanRequestFromWire((await client.cancelHumanRequest(id, reason)) as wire.HumanRequestWire)),
    skillCatalog: () => catalog,
    audit: (q = {}) =>
      list(
        () => api.audit.$get({ query: query({ pid: q.pid, action: q.action, after: str(q.after), limit: str(q.limit) }) }),
        wire.auditFromWire,
      ),
    events: (q = {}) =>
      list(
        () => api.events.$get({ query: query({ pid: q.pid, type: q.type, after: str(q.after), limit: str(q.limit) }) }),
        wire.eventFromWire,
      ),
    llmCalls: (q = {}) => list(() => api['llm-calls'].$get({ query: query({ pid: q.pid, limit: str(q.limit) }) }), wire.llmCallFromWire),
    signal: (pid, signal, reason) =>
      call(async () => asProcess(await client.signal(pid, signal, { confirmed: true, ...(reason !== undefined ? { reason } : {}) }))),
    listObjects: (q) =>
      call(async () => {
        const rows = await client.objects(query({ ns: q.namespace, pid: q.ownerPid, limit: str(q.limit) }));
        return (rows as wire.ObjectMetaWire[]).map((r): ObjectRow => wire.objectMetaFromWire(r));
      }),
  };
}
