import type { AppType } from '@libos/server';
import { hc, type ClientResponse, type InferRequestType, type InferResponseType } from 'hono/client';
import { errorFromResponse, LibosApiError } from './api-error.js';
import { readSse, type SseMessage } from './event-stream.js';

/** Hono's typed client over the server's routes (`client.api.processes.$get()`…): every input and JSON answer typed. */
export type LibosRoutes = ReturnType<typeof hc<AppType>>;
type Api = LibosRoutes['api'];

/** A process as `GET /api/processes` lists it (tool table, loaded Skills, status, wait state…). */
export type ProcessInfo = InferResponseType<Api['processes']['$get'], 200>[number];
/** One process with its budget (`GET /api/processes/:pid`). */
export type ProcessDetail = InferResponseType<Api['processes'][':pid']['$get'], 200>;
/** The bounded console view (`GET /api/snapshot`). */
export type Snapshot = InferResponseType<Api['snapshot']['$get'], 200>;
export type ProcessSummary = Snapshot['processes'][number];
export type HumanRequest = InferResponseType<Api['human-requests']['$get'], 200>[number];
export type RuntimeEvent = InferResponseType<Api['processes'][':pid']['events']['$get'], 200>[number];
export type AuditRecord = InferResponseType<Api['processes'][':pid']['audit']['$get'], 200>[number];
export type Message = InferResponseType<Api['processes'][':pid']['messages']['$get'], 200>[number];
export type LlmCall = InferResponseType<Api['processes'][':pid']['llm-calls']['$get'], 200>[number];
export type Capability = InferResponseType<Api['processes'][':pid']['capabilities']['$get'], 200>[number];
/** A broker envelope: `{ ok: true, payload, wait? }` or `{ ok: false, error }` (a 409 confirmation refusal is thrown instead). */
export type ToolCallResult = Exclude<
  InferResponseType<Api['processes'][':pid']['call']['$post'], 200>,
  { readonly confirmation_required: true }
>;
export type SchedulerReport = InferResponseType<Api['scheduler']['run']['$post'], 200>;
export type Health = InferResponseType<Api['health']['$get'], 200>;
/** `{mode: 'background', state, busy, quanta, …}` or `{mode: 'on_request', provider}`. */
export type SchedulerStatus = InferResponseType<Api['scheduler']['$get'], 200>;
export type SkillCatalogEntry = InferResponseType<Api['skills']['$get'], 200>[number];

export type SpawnInput = InferRequestType<Api['processes']['$post']>['json'];
export type RespondInput = InferRequestType<Api['human-requests'][':id']['respond']['$post']>['json'];
export type MessageInput = InferRequestType<Api['processes'][':pid']['message']['$post']>['json'];
export type GrantInput = Omit<InferRequestType<Api['processes'][':pid']['grants']['$post']>['json'], 'confirmed'>;
export type ProcessSignal = InferRequestType<Api['processes'][':pid']['signal']['$post']>['json']['signal'];
export type ProcessStatus = ProcessInfo['status'];
export type HumanRequestStatus = HumanRequest['status'];
type Query<F extends (args: never) => unknown> = NonNullable<Parameters<F>[0]> extends { query: infer Q } ? Q : never;
export type EventsQuery = Query<Api['processes'][':pid']['events']['$get']>;
export type AuditQuery = Query<Api['processes'][':pid']['audit']['$get']>;
export type MessagesQuery = Query<Api['processes'][':pid']['messages']['$get']>;
export type ObjectsQuery = Query<Api['objects']['$get']>;
/** Runtime-wide reads: `pid` filters by the process (the actor, for audit). */
export type AllAuditQuery = Query<Api['audit']['$get']>;
export type AllEventsQuery = Query<Api['events']['$get']>;

/** An Object's metadata as `GET /api/objects` lists it: never its payload (`payload_available` says whether this runtime holds it). */
export type ObjectMeta = InferResponseType<Api['objects']['$get'], 200>[number];

/** A message of the live stream: a durable event (`id` = its seq), an audit record, or an invalidated cursor. */
export type StreamMessage =
  | (SseMessage<RuntimeEvent> & {
      readonly event: 'event.appended' | 'human_request.updated' | 'message.posted' | 'human_output.appended' | 'llm_call.appended';
    })
  | (SseMessage<AuditRecord> & { readonly event: 'audit.appended' })
  | (SseMessage<{ reason: string; cursor: number; head: number; message: string }> & { readonly event: 'event.invalidated' })
  | (SseMessage<{ error: { code: string; message: string } }> & { readonly event: 'error' });

export interface LibosClientOptions {
  /** The server's origin as `libos serve` prints it, e.g. `http://127.0.0.1:43121`. */
  readonly url: string;
  /** The bearer token `libos serve` prints. */
  readonly token: string;
  /** A fetch to use instead of the global one (e.g. a Hono app's `request` in tests). */
  readonly fetch?: typeof fetch;
}

/** Options of a high-risk operation: without `confirmed: true` the server answers 409 (a `LibosApiError` with `confirmation`). */
export interface ConfirmOptions {
  readonly confirmed?: boolean;
}

type Json<R> = R extends ClientResponse<infer T, infer _S, infer _F> ? T : never;

/**
 * A typed client of a served libOS runtime (`libos serve`, or `serve()` of `@libos/server`). Every method answers
 * the server's JSON; a non-2xx answer throws `LibosApiError` (with the server's code and details). `routes` is the
 * underlying Hono client for anything not wrapped here.
 *
 * @example
 * const client = new LibosClient({ url: 'http://127.0.0.1:43121', token: 'the token libos serve printed' });
 * const p = await client.spawn({ goal: 'Keep a ledger' });
 * for (const r of await client.humanRequests({ status: 'pending' })) await client.respond(r.id, { approved: false });
 * for await (const m of client.stream({ cursor: 0, signal: AbortSignal.timeout(60_000) })) console.log(m.event, m.data);
 */
export class LibosClient {
  readonly url: string;
  readonly routes: LibosRoutes;
  readonly #token: string;
  readonly #fetch: typeof fetch;

  constructor(opts: LibosClientOptions) {
    this.url = opts.url.replace(/\/+$/, '');
    this.#token = opts.token;
    this.#fetch = opts.fetch ?? ((input, init) => fetch(input, init));
    this.routes = hc<AppType>(this.url, { headers: { authorization: `Bearer ${opts.token}` }, fetch: this.#fetch });
  }

  /** The JSON of a 2xx answer; anything else throws the server's error as a LibosApiError. */
  async #json<R extends ClientResponse<unknown, number, string>>(pending: Promise<R>): Promise<Json<R>> {
    const res = await pending;
    if (!res.ok) throw await errorFromResponse(res as unknown as Response);
    return (await res.json()) as Json<R>;
  }

  /** `GET /api/health`: the store served and the model configured. */
  health(): Promise<Health> {
    return this.#json(this.routes.api.health.$get());
  }

  /** `GET /api/snapshot`: the newest processes, pending human requests and events, and the cursor to stream from. */
  snapshot(): Promise<Snapshot> {
    return this.#json(this.routes.api.snapshot.$get());
  }

  /** `GET /api/processes`: every process (oldest first), or those with `status`. */
  processes(status?: ProcessStatus): Promise<ProcessInfo[]> {
    return this.#json(this.routes.api.processes.$get({ query: status ? { status } : {} })) as Promise<ProcessInfo[]>;
  }

  /** `GET /api/processes/:pid`: one process with its budget. */
  process(pid: string): Promise<ProcessDetail> {
    return this.#json(this.routes.api.processes[':pid'].$get({ param: { pid } }));
  }

  /** `POST /api/processes`: spawns a root process. */
  spawn(input: SpawnInput): Promise<ProcessInfo> {
    return this.#json(this.routes.api.processes.$post({ json: input }));
  }

  /** `POST /api/processes/:pid/call`: one tool call as the process (a failed call is an `ok: false` envelope, not a throw). */
  call(pid: string, tool: string, args: Record<string, unknown> = {}, opts: ConfirmOptions = {}): Promise<ToolCallResult> {
    const json = { tool, args, ...(opts.confirmed ? { confirmed: true } : {}) };
    return this.#json(this.routes.api.processes[':pid'].call.$post({ param: { pid }, json })) as Promise<ToolCallResult>;
  }

  /** `POST /api/processes/:pid/message`: a human message to the process. */
  message(pid: string, input: MessageInput) {
    return this.#json(this.routes.api.processes[':pid'].message.$post({ param: { pid }, json: input }));
  }

  /** `POST /api/processes/:pid/signal`: pause or resume; cancel and terminate need `confirmed: true`. */
  signal(pid: string, signal: ProcessSignal, opts: ConfirmOptions & { readonly reason?: string } = {}) {
    const json = { signal, ...(opts.reason ? { reason: opts.reason } : {}), ...(opts.confirmed ? { confirmed: true } : {}) };
    return this.#json(this.routes.api.processes[':pid'].signal.$post({ param: { pid }, json }));
  }

  /** `GET /api/processes/:pid/messages`: its mailbox (newest `limit`; `unread: 'true'` for unread only). */
  messages(pid: string, query: MessagesQuery = {}): Promise<Message[]> {
    return this.#json(this.routes.api.processes[':pid'].messages.$get({ param: { pid }, query })) as Promise<Message[]>;
  }

  /** `GET /api/processes/:pid/events`: its durable events, oldest first, after `after` (a seq). */
  events(pid: string, query: EventsQuery = {}): Promise<RuntimeEvent[]> {
    return this.#json(this.routes.api.processes[':pid'].events.$get({ param: { pid }, query })) as Promise<RuntimeEvent[]>;
  }

  /** `GET /api/processes/:pid/audit`: the audit records the process acted on. */
  audit(pid: string, query: AuditQuery = {}): Promise<AuditRecord[]> {
    return this.#json(this.routes.api.processes[':pid'].audit.$get({ param: { pid }, query })) as Promise<AuditRecord[]>;
  }

  /** `GET /api/processes/:pid/llm-calls`: its model calls. */
  llmCalls(pid: string, limit?: number): Promise<LlmCall[]> {
    const query = limit === undefined ? {} : { limit: String(limit) };
    return this.#json(this.routes.api.processes[':pid']['llm-calls'].$get({ param: { pid }, query })) as Promise<LlmCall[]>;
  }

  /** `GET /api/processes/:pid/capabilities`: its grants (`all` includes revoked and expired ones). */
  capabilities(pid: string, all = false): Promise<Capability[]> {
    const query = all ? { all: 'true' as const } : {};
    return this.#json(this.routes.api.processes[':pid'].capabilities.$get({ param: { pid }, query })) as Promise<Capability[]>;
  }

  /** `POST /api/processes/:pid/grants`: a grant as the host; a high-risk one (meta rights, wildcards) needs `confirmed: true`. */
  grant(pid: string, input: GrantInput, opts: ConfirmOptions = {}): Promise<Capability> {
    const json = { ...input, ...(opts.confirmed ? { confirmed: true } : {}) };
    return this.#json(this.routes.api.processes[':pid'].grants.$post({ param: { pid }, json })) as Promise<Capability>;
  }

  /** `POST /api/capabilities/:id/revoke`: revokes a capability (404 `capability_not_found`). */
  revoke(id: string): Promise<{ revoked: string }> {
    return this.#json(this.routes.api.capabilities[':id'].revoke.$post({ param: { id } }));
  }

  /** `GET /api/audit`: audit records across the runtime, oldest first (`pid` = the actor). */
  allAudit(query: AllAuditQuery = {}): Promise<AuditRecord[]> {
    return this.#json(this.routes.api.audit.$get({ query })) as Promise<AuditRecord[]>;
  }

  /** `GET /api/events`: durable events across the runtime, oldest first. */
  allEvents(query: AllEventsQuery = {}): Promise<RuntimeEvent[]> {
    return this.#json(this.routes.api.events.$get({ query })) as Promise<RuntimeEvent[]>;
  }

  /** `GET /api/skills`: the Skill catalog of the served runtime. */
  skills(): Promise<SkillCatalogEntry[]> {
    return this.#json(this.routes.api.skills.$get()) as Promise<SkillCatalogEntry[]>;
  }

  /** `GET /api/tools`: every registered tool name. */
  tools(): Promise<string[]> {
    return this.#json(this.routes.api.tools.$get()) as Promise<string[]>;
  }

  /** `GET /api/objects`: Object metadata (never payloads), newest first, by namespace (`ns`) and/or owner `pid`. */
  objects(query: ObjectsQuery = {}): Promise<ObjectMeta[]> {
    return this.#json(this.routes.api.objects.$get({ query })) as Promise<ObjectMeta[]>;
  }

  /** `GET /api/human-requests`: the human queue, by status and/or process. */
  humanRequests(query: { status?: HumanRequestStatus; pid?: string } = {}): Promise<HumanRequest[]> {
    return this.#json(this.routes.api['human-requests'].$get({ query })) as Promise<HumanRequest[]>;
  }

  /** `POST /api/human-requests/:id/respond`: approve (a question needs `answer`) or reject a pending request. */
  respond(id: string, input: RespondInput): Promise<HumanRequest> {
    return this.#json(this.routes.api['human-requests'][':id'].respond.$post({ param: { id }, json: input })) as Promise<HumanRequest>;
  }

  /** `POST /api/human-requests/:id/cancel`: settles a pending request as cancelled. */
  cancelHumanRequest(id: string, reason?: string): Promise<HumanRequest> {
    const json = reason ? { reason } : {};
    return this.#json(this.routes.api['human-requests'][':id'].cancel.$post({ param: { id }, json })) as Promise<HumanRequest>;
  }

  /** `POST /api/scheduler/run`: runs the server's scheduler for at most `maxQuanta` quanta (409 without a provider). */
  runScheduler(maxQuanta: number): Promise<SchedulerReport> {
    return this.#json(this.routes.api.scheduler.run.$post({ json: { max_quanta: maxQuanta } }));
  }

  /** `GET /api/scheduler`: whether the server runs its scheduler in the background, and its state. */
  schedulerStatus(): Promise<SchedulerStatus> {
    return this.#json(this.routes.api.scheduler.$get());
  }

  /** `POST /api/scheduler/pause`: the background scheduler starts no new quantum (409 on a server without one). */
  pauseScheduler(reason?: string) {
    return this.#json(this.routes.api.scheduler.pause.$post({ json: reason ? { reason } : {} }));
  }

  /** `POST /api/scheduler/resume`: the background scheduler runs again. */
  resumeScheduler() {
    return this.#json(this.routes.api.scheduler.resume.$post());
  }

  /**
   * `GET /api/events/stream`: the live stream, as an async iterable. With `cursor` (an event seq, e.g. a snapshot's)
   * the durable events after it come first, so nothing is missed between a snapshot and the stream. It ends when the
   * server ends it or `signal` aborts; a refused connection throws `LibosApiError`.
   */
  async *stream(opts: { readonly cursor?: number; readonly signal?: AbortSignal } = {}): AsyncGenerator<StreamMessage> {
    const url = `${this.url}/api/events/stream${opts.cursor === undefined ? '' : `?cursor=${opts.cursor}`}`;
    const headers = { authorization: `Bearer ${this.#token}`, accept: 'text/event-stream' };
    const res = await this.#fetch(url, { headers, ...(opts.signal ? { signal: opts.signal } : {}) });
    if (!res.ok) throw await errorFromResponse(res);
    if (!res.body) {
      throw new LibosApiError(res.status, { code: 'unavailable', category: 'unavailable', message: 'the event stream has no body' });
    }
    for await (const m of readSse(res.body, opts.signal)) yield m as StreamMessage;
  }
}
