import { request } from 'node:http';

export interface RawResponse {
  readonly status: number;
  readonly contentType: string | undefined;
  /** The parsed JSON body; `undefined` for an event stream (closed at its headers) or an empty body. */
  readonly body: any;
}

export interface RawInit {
  readonly method?: string;
  /** Sent as they are, `host` included (fetch would replace it). */
  readonly headers?: Record<string, string>;
  readonly body?: string | undefined;
}

/** One request with node:http, so the Host header is whatever the test says. An SSE answer is closed once its headers arrive. */
export function rawRequest(url: string, init: RawInit = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? (init.body === undefined ? 'GET' : 'POST'), headers: init.headers ?? {} }, (res) => {
      const contentType = res.headers['content-type'];
      if (contentType?.startsWith('text/event-stream')) {
        res.destroy();
        resolve({ status: res.statusCode!, contentType, body: undefined });
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({ status: res.statusCode!, contentType, body: text === '' ? undefined : JSON.parse(text) });
        } catch (err) {
          reject(new Error(`not JSON (status ${res.statusCode}): ${text.slice(0, 200)}`, { cause: err }));
        }
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
}
