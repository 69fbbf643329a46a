/** A server error as JSON: a code of the closed table, its category, a message naming the field, and details. */
export interface ApiErrorPayload {
  readonly code: string;
  readonly category: string;
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

/**
 * The server's answer to a high-risk operation sent without `confirmed: true` (409): what would run and what was sent.
 * Nothing ran; repeat the request with `confirmed: true` once a person agreed.
 */
export interface ConfirmationRequired {
  readonly confirmation_required: true;
  /** e.g. `tool:process_exit` or `signal:terminate` */
  readonly action: string;
  readonly preview: Readonly<Record<string, unknown>>;
  readonly error: ApiErrorPayload;
}

/**
 * A request the server refused or failed: `status` is the HTTP status, `code`/`category`/`details` the server's
 * error. `confirmation` is set when the refusal only asks for a confirmation (see `ConfirmationRequired`).
 *
 * @example
 * try {
 *   await client.signal(pid, 'terminate');
 * } catch (err) {
 *   if (err instanceof LibosApiError && err.confirmation) await client.signal(pid, 'terminate', { confirmed: true });
 *   else throw err;
 * }
 */
export class LibosApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly category: string;
  readonly details: Readonly<Record<string, unknown>> | undefined;
  readonly confirmation: ConfirmationRequired | undefined;

  constructor(status: number, error: ApiErrorPayload, confirmation?: ConfirmationRequired) {
    super(error.message);
    this.name = 'LibosApiError';
    this.status = status;
    this.code = error.code;
    this.category = error.category;
    this.details = error.details;
    this.confirmation = confirmation;
  }

  /** The error as the server sent it. */
  toJSON(): ApiErrorPayload {
    return { code: this.code, category: this.category, message: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

const isPayload = (v: unknown): v is ApiErrorPayload => {
  const p = v as Partial<ApiErrorPayload> | null;
  return typeof p === 'object' && p !== null && typeof p.code === 'string' && typeof p.message === 'string';
};

/** The LibosApiError a non-2xx response stands for (a body that is not the server's error JSON is `unavailable`). */
export async function errorFromResponse(res: Response): Promise<LibosApiError> {
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    body = undefined;
  }
  const b = (body ?? {}) as { error?: unknown; confirmation_required?: unknown };
  if (b.confirmation_required === true && isPayload(b.error)) return new LibosApiError(res.status, b.error, body as ConfirmationRequired);
  if (isPayload(b.error)) return new LibosApiError(res.status, b.error);
  const message = `HTTP ${res.status} ${res.statusText}: ${text.slice(0, 200) || '(empty body)'}`;
  return new LibosApiError(res.status, { code: 'unavailable', category: 'unavailable', message, details: { status: res.status } });
}
