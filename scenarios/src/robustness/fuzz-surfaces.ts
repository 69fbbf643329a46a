import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Runtime } from '@libos/kernel';
import type { createApp } from '@libos/server';
import { CATEGORY_HTTP_STATUS, ERROR_CODES, isErrorCode, type ErrorCode } from '@libos/sdk';
import { jsonText } from './json-text.js';

/**
 * The three ways a tool call reaches the broker (`rt.call`; REST `POST /api/processes/:pid/call` and MCP
 * `tools/call`, both through the server's app in process, every middleware included), and the judge of what comes
 * back: a well-formed result, a well-formed error with a closed-table code, a refusal by the surface itself (an
 * unconfirmed high-risk call; an MCP request that is not valid MCP), or a failure of the suite (an `internal`
 * error, or an answer of the wrong shape).
 */

export const SURFACES = ['broker', 'rest', 'mcp'] as const;
export type Surface = (typeof SURFACES)[number];

export type Verdict =
  | { readonly kind: 'ok'; readonly payload: unknown }
  | { readonly kind: 'error'; readonly code: ErrorCode; readonly message: string }
  | { readonly kind: 'refused'; readonly reason: string }
  | { readonly kind: 'internal'; readonly code: string; readonly message: string }
  | { readonly kind: 'malformed'; readonly problem: string };

const malformed = (problem: string): Verdict => ({ kind: 'malformed', problem });
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const shown = (v: unknown) => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 300 ? `${s.slice(0, 300)}…` : s;
};

/** An error payload `{code, category, message, details?}` with a closed-table code; `internal` is a failure. */
export function judgeError(e: unknown): Verdict {
  if (!isRecord(e)) return malformed(`error is not an object: ${shown(e)}`);
  if (!isErrorCode(e.code)) return malformed(`error code outside the closed table: ${shown(e.code)}`);
  if (e.category !== ERROR_CODES[e.code]) return malformed(`error ${e.code} has category ${shown(e.category)}, not ${ERROR_CODES[e.code]}`);
  if (typeof e.message !== 'string' || e.message === '') return malformed(`error ${e.code} has no message`);
  if (e.details !== undefined && !isRecord(e.details)) return malformed(`error ${e.code} details is not an object`);
  if (e.category === 'internal') return { kind: 'internal', code: e.code, message: e.message };
  return { kind: 'error', code: e.code, message: e.message };
}

/** A broker envelope: `{ok: true, call_id, tool, payload, wait?, notices?}` or `{ok: false, call_id, tool, error}`. */
export function judgeEnvelope(env: unknown, tool: string): Verdict {
  if (!isRecord(env)) return malformed(`envelope is not an object: ${shown(env)}`);
  if (typeof env.call_id !== 'string' || !env.call_id.startsWith('call_')) return malformed(`envelope call_id ${shown(env.call_id)}`);
  if (env.tool !== tool) return malformed(`envelope names tool ${shown(env.tool)}, not ${tool}`);
  if (env.ok === false) return judgeError(env.error);
  if (env.ok !== true) return malformed(`envelope ok is ${shown(env.ok)}`);
  if (!('payload' in env)) return malformed('ok envelope without payload');
  if (env.wait !== undefined && !(isRecord(env.wait) && typeof env.wait.kind === 'string')) return malformed(`wait ${shown(env.wait)}`);
  if (env.notices !== undefined && !Array.isArray(env.notices)) return malformed(`notices ${shown(env.notices)}`);
  return { kind: 'ok', payload: env.payload };
}

/** One call as `pid` on a surface; throws only when the surface itself broke (a failure of the suite). */
export type CallOn = (pid: string, tool: string, args: unknown, confirmed: boolean | undefined) => Promise<Verdict>;

/** The broker in process: `rt.call`. */
export function brokerSurface(rt: Runtime): CallOn {
  return async (pid, tool, args) => judgeEnvelope(await rt.call(pid, tool, args), tool);
}

/** The server's Hono app, called in process (`app.request`): the whole HTTP stack but the socket. */
export type App = ReturnType<typeof createApp>;

/** A request to `app` as from a loopback client: bearer token and a loopback Host header. */
function send(app: App, token: string, path: string, init: RequestInit): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${token}`);
  headers.set('host', '127.0.0.1');
  return Promise.resolve(app.request(path, { ...init, headers }));
}

/**
 * REST `POST /api/processes/:pid/call {tool, args, confirmed?}`: 200 carries the envelope, 409 an unconfirmed
 * high-risk call, else `{error}` with the status of its category. The body is written without recursion, so it may
 * nest deeper than `JSON.stringify` allows.
 */
export function restSurface(app: App, token: string): CallOn {
  return async (pid, tool, args, confirmed) => {
    const body = jsonText({ tool, args, ...(confirmed === undefined ? {} : { confirmed }) });
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body };
    const res = await send(app, token, `/api/processes/${pid}/call`, init);
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return malformed(`HTTP ${res.status} body is not JSON: ${text.slice(0, 200)}`);
    }
    if (res.status === 200) return judgeEnvelope(json, tool);
    if (!isRecord(json)) return malformed(`HTTP ${res.status} body ${shown(json)}`);
    if (res.status === 409 && json.confirmation_required === true) return judgeRefusal(json);
    const e = judgeError(json.error);
    if (e.kind !== 'error') return e;
    const status = CATEGORY_HTTP_STATUS[ERROR_CODES[e.code]];
    return res.status === status ? e : malformed(`HTTP ${res.status} for ${e.code} (its category maps to ${status})`);
  };
}

/** An unconfirmed high-risk call: `{confirmation_required: true, action, preview, error: conflict}`. */
function judgeRefusal(json: Record<string, unknown>): Verdict {
  const e = judgeError(json.error);
  if (e.kind !== 'error') return e;
  if (e.code !== 'conflict' || typeof json.action !== 'string') return malformed(`confirmation refusal ${shown(json)}`);
  return { kind: 'refused', reason: 'confirmation_required' };
}

/** The tools/call argument that confirms a high-risk call over MCP (the server takes it off before the broker). */
export const MCP_CONFIRM_ARG = '_confirmed';

/**
 * MCP through the official SDK client (its transport's `fetch` is the app, in process), one client per pid (the
 * endpoint is `/mcp/processes/:pid`). A call's `confirmed` travels as the `_confirmed` argument. Arguments that are
 * not an object are not a valid tools/call: the SDK's request validation refuses them with a JSON-RPC error
 * (InvalidParams, or InternalError: the low-level handler the server registers reports its schema mismatch that
 * way), which counts as a refusal; so does the transport's 413 for a request body over its bound (4 MiB).
 */
export function mcpSurface(app: App, token: string): CallOn & { close(): Promise<void> } {
  const clients = new Map<string, Client>();
  const clientFor = async (pid: string) => {
    let c = clients.get(pid);
    if (!c) {
      for (const old of clients.values()) await old.close();
      clients.clear();
      c = new Client({ name: 'libos-fuzz', version: '0.0.0' });
      const url = new URL(`http://127.0.0.1/mcp/processes/${pid}`);
      const viaApp = (input: string | URL | Request, init?: RequestInit) =>
        send(app, token, input instanceof Request ? input.url : String(input), init ?? {});
      await c.connect(new StreamableHTTPClientTransport(url, { fetch: viaApp }));
      clients.set(pid, c);
    }
    return c;
  };
  const call: CallOn = async (pid, tool, args, confirmed) => {
    const client = await clientFor(pid);
    const sent = isRecord(args) && confirmed !== undefined ? { ...args, [MCP_CONFIRM_ARG]: confirmed } : args;
    let r: Record<string, unknown>;
    try {
      r = (await client.callTool({ name: tool, arguments: sent as Record<string, unknown> })) as Record<string, unknown>;
    } catch (err) {
      const { code, message } = err as { code?: unknown; message?: string };
      const invalidParams = (code === -32602 || code === -32603) && /params[\s\S]*arguments/.test(message ?? '');
      if (!isRecord(args) && invalidParams) return { kind: 'refused', reason: 'mcp_invalid_params' };
      // The transport's own bound on a request body (HTTP 413 before any JSON-RPC handling).
      if (code === 413) return { kind: 'refused', reason: 'mcp_payload_too_large' };
      throw err;
    }
    const content = r.content;
    const isText = (c: unknown) => isRecord(c) && c.type === 'text' && typeof c.text === 'string';
    const texts = Array.isArray(content) && content.length > 0 && content.every(isText);
    if (!texts) return malformed(`MCP content ${shown(content)}`);
    let first: unknown;
    try {
      first = JSON.parse((content[0] as { text: string }).text);
    } catch {
      return malformed(`MCP text is not JSON: ${shown(content[0])}`);
    }
    if (r.isError !== true) return { kind: 'ok', payload: first };
    return isRecord(first) && first.confirmation_required === true ? judgeRefusal(first) : judgeError(first);
  };
  return Object.assign(call, {
    async close() {
      for (const c of clients.values()) await c.close();
      clients.clear();
    },
  });
}
