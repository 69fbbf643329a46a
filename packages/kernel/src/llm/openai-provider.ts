import { LibosError, isLibosError } from '@libos/sdk';
import { retryDelayMs } from './internal/backoff.js';
import { buildChatRequestBody, parseChatResponse } from './internal/openai-wire.js';
import type { LlmProvider, LlmRequest, LlmResponse } from './provider.js';

/** The subset of `fetch` the provider uses; inject one in tests. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;
/** Waits `ms`; rejects early when `signal` aborts. Inject one in tests so backoff does not slow them. */
export type SleepFn = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface OpenAiProviderOptions {
  /** default `https://api.openai.com/v1`; `/chat/completions` is appended */
  readonly baseUrl?: string;
  readonly model: string;
  /** sent as `Authorization: Bearer <key>` when set; never logged nor put in an error */
  readonly apiKey?: string;
  /** per attempt, default 60000 */
  readonly timeoutMs?: number;
  /** retries after the first attempt on 429, 5xx, network errors and timeouts; default 3 */
  readonly maxRetries?: number;
  /** default 0.2 */
  readonly temperature?: number;
  readonly maxTokens?: number;
  readonly fetch?: FetchLike;
  readonly sleep?: SleepFn;
  /** jitter source, `[0, 1)`; default `Math.random` */
  readonly random?: () => number;
}

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
const BODY_EXCERPT_CHARS = 500;

type AttemptOutcome =
  | { readonly ok: true; readonly body: unknown }
  | { readonly ok: false; readonly error: LibosError; readonly retryable: boolean; readonly retryAfter: string | null };

/**
 * A provider for any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, LM Studio).
 * Retries 429, 5xx, network errors and timeouts with exponential backoff and jitter (honouring
 * `Retry-After`, capped), telling `req.onRetry` before each retry; a timeout is `provider_timeout`, any other
 * failure `provider_error`, an aborted `req.signal` is `cancelled`. Arguments that are not a JSON object come back
 * as `argumentsError`, not a throw.
 *
 * @example
 * const provider = new OpenAiProvider({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen2.5:7b' });
 * const res = await provider.completeAction({ messages: [{ role: 'user', content: 'Say hi.' }], tools: [], parallelToolCalls: false });
 */
export class OpenAiProvider implements LlmProvider {
  readonly name = 'openai';
  readonly model: string;
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly temperature: number;
  readonly maxTokens: number | undefined;
  readonly #apiKey: string | undefined;
  readonly #fetch: FetchLike;
  readonly #sleep: SleepFn;
  readonly #random: () => number;

  /** Validates the options (throws `invalid_arguments`). */
  constructor(options: OpenAiProviderOptions) {
    this.model = requireModel(options.model);
    this.baseUrl = normalizeBaseUrl(options.baseUrl ?? OPENAI_DEFAULT_BASE_URL);
    this.timeoutMs = requireNumber('timeoutMs', options.timeoutMs ?? 60_000, (n) => Number.isFinite(n) && n > 0, 'a positive number');
    this.maxRetries = requireNumber('maxRetries', options.maxRetries ?? 3, (n) => Number.isInteger(n) && n >= 0, 'an integer >= 0');
    this.temperature = requireNumber(
      'temperature',
      options.temperature ?? 0.2,
      (n) => Number.isFinite(n) && n >= 0 && n <= 2,
      'between 0 and 2',
    );
    this.maxTokens =
      options.maxTokens === undefined
        ? undefined
        : requireNumber('maxTokens', options.maxTokens, (n) => Number.isInteger(n) && n > 0, 'a positive integer');
    this.#apiKey = options.apiKey === '' ? undefined : options.apiKey;
    this.#fetch = options.fetch ?? ((url, init) => fetch(url, init));
    this.#sleep = options.sleep ?? defaultSleep;
    this.#random = options.random ?? Math.random;
  }

  async completeAction(req: LlmRequest): Promise<LlmResponse> {
    try {
      return await this.#complete(req);
    } catch (err) {
      throw isLibosError(err) ? err : LibosError.from(err);
    }
  }

  async #complete(req: LlmRequest): Promise<LlmResponse> {
    const url = `${this.baseUrl}/chat/completions`;
    const body = JSON.stringify(buildChatRequestBody(req, { model: this.model, temperature: this.temperature, maxTokens: this.maxTokens }));
    for (let attempt = 0; ; attempt++) {
      if (req.signal?.aborted) throw cancelled(req.signal);
      const outcome = await this.#attempt(url, body, req.signal);
      if (outcome.ok) return parseChatResponse(outcome.body, this.model);
      if (!outcome.retryable || attempt >= this.maxRetries) {
        throw new LibosError(outcome.error.code, outcome.error.message, {
          details: { ...outcome.error.details, attempts: attempt + 1 },
          cause: outcome.error.cause,
        });
      }
      const delayMs = retryDelayMs(attempt, outcome.retryAfter, this.#random);
      const error = { code: outcome.error.code, message: outcome.error.message };
      await req.onRetry?.({ attempt: attempt + 1, max_attempts: this.maxRetries + 1, delay_ms: delayMs, error });
      try {
        await this.#sleep(delayMs, req.signal);
      } catch (err) {
        if (req.signal?.aborted) throw cancelled(req.signal);
        throw err;
      }
    }
  }

  /** One HTTP round trip under its own timeout; never throws except for cancellation. */
  async #attempt(url: string, body: string, signal: AbortSignal | undefined): Promise<AttemptOutcome> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`timed out after ${this.timeoutMs} ms`));
    }, this.timeoutMs);
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await this.#fetch(url, { method: 'POST', headers: this.#headers(), body, signal: controller.signal });
      const text = await res.text();
      if (res.ok) return this.#decode(text);
      const retryable = res.status === 429 || res.status >= 500;
      const error = new LibosError(
        'provider_error',
        `openai provider: HTTP ${res.status}: ${this.#redact(text.slice(0, BODY_EXCERPT_CHARS))}`,
        {
          details: { status: res.status },
        },
      );
      return { ok: false, error, retryable, retryAfter: res.headers.get('retry-after') };
    } catch (err) {
      if (signal?.aborted) throw cancelled(signal);
      if (timedOut) {
        const error = new LibosError('provider_timeout', `openai provider: no response within ${this.timeoutMs} ms`, {
          details: { timeoutMs: this.timeoutMs },
          cause: err,
        });
        return { ok: false, error, retryable: true, retryAfter: null };
      }
      const error = new LibosError('provider_error', `openai provider: network error: ${this.#redact(describeNetworkError(err))}`, {
        cause: err,
      });
      return { ok: false, error, retryable: true, retryAfter: null };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  #decode(text: string): AttemptOutcome {
    try {
      return { ok: true, body: JSON.parse(text) as unknown };
    } catch (err) {
      const excerpt = this.#redact(text.slice(0, BODY_EXCERPT_CHARS));
      const error = new LibosError('provider_error', `openai provider: malformed response: body is not JSON: ${excerpt}`, { cause: err });
      return { ok: false, error, retryable: false, retryAfter: null };
    }
  }

  #headers(): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.#apiKey !== undefined) headers.authorization = `Bearer ${this.#apiKey}`;
    return headers;
  }

  /** Removes the API key from text that came from the server (some echo the credential back). */
  #redact(text: string): string {
    return this.#apiKey === undefined ? text : text.split(this.#apiKey).join('[redacted]');
  }
}

/**
 * An `OpenAiProvider` configured from the environment: `LIBOS_OPENAI_BASE_URL`, `LIBOS_OPENAI_MODEL` and
 * `LIBOS_OPENAI_API_KEY`, each falling back to `OPENAI_BASE_URL`, `OPENAI_MODEL`, `OPENAI_API_KEY`; empty
 * values count as unset and `overrides` win over both. No model anywhere ⇒ `invalid_arguments`.
 *
 * @example
 * const provider = openAiProviderFromEnv(process.env, { timeoutMs: 30_000 });
 */
export function openAiProviderFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: Partial<OpenAiProviderOptions> = {},
): OpenAiProvider {
  const pick = (name: string): string | undefined => nonEmpty(env[`LIBOS_${name}`]) ?? nonEmpty(env[name]);
  const model = overrides.model ?? pick('OPENAI_MODEL');
  if (model === undefined) {
    throw new LibosError('invalid_arguments', 'openai provider: LIBOS_OPENAI_MODEL is not set (nor OPENAI_MODEL)', {
      details: { variable: 'LIBOS_OPENAI_MODEL' },
    });
  }
  return new OpenAiProvider({
    ...overrides,
    model,
    baseUrl: overrides.baseUrl ?? pick('OPENAI_BASE_URL'),
    apiKey: overrides.apiKey ?? pick('OPENAI_API_KEY'),
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function requireModel(model: unknown): string {
  if (typeof model !== 'string' || model.trim() === '') throw new LibosError('invalid_arguments', 'openai provider: model: required');
  return model;
}

function normalizeBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch (err) {
    throw new LibosError('invalid_arguments', 'openai provider: baseUrl: not a URL', { cause: err });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new LibosError('invalid_arguments', 'openai provider: baseUrl: must be http or https');
  return baseUrl.replace(/\/+$/, '');
}

function requireNumber(field: string, value: number, ok: (n: number) => boolean, expected: string): number {
  if (typeof value !== 'number' || !ok(value))
    throw new LibosError('invalid_arguments', `openai provider: ${field}: must be ${expected} (got ${String(value)})`);
  return value;
}

function cancelled(signal: AbortSignal): LibosError {
  return new LibosError('cancelled', 'openai provider: request aborted', { cause: signal.reason });
}

function describeNetworkError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}

const defaultSleep: SleepFn = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
