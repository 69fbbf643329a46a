import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { LibosError } from '@libos/sdk';
import { errorResponse } from './internal/errors.js';

/** One built file of the web console, read once when the app is created. */
interface Asset {
  readonly type: string;
  readonly body: Uint8Array<ArrayBuffer>;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
};

/**
 * The console page may load only its own files and talk only to this server; it is never framed. The token it
 * needs travels in the URL fragment (never sent to the server) and then in an Authorization header.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Where the built console is: `dist/console` next to the server's bundle (`dist/index.js`), which is also where a
 * source checkout's tests find it (`src/` → `../dist/console`) once `npm run build` has run.
 */
export function defaultConsoleDir(): string {
  const beside = fileURLToPath(new URL('./console/', import.meta.url));
  return existsSync(join(beside, 'index.html')) ? beside : fileURLToPath(new URL('../dist/console/', import.meta.url));
}

/** Every file under `dir` by URL path (`/index.html`, `/assets/x.js`); empty when the console was not built. */
function readAssets(dir: string): Map<string, Asset> {
  const files = new Map<string, Asset>();
  if (!existsSync(join(dir, 'index.html'))) return files;
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else {
        const type = TYPES[extname(name)] ?? 'application/octet-stream';
        files.set(`/${relative(dir, full).split(sep).join('/')}`, { type, body: new Uint8Array(readFileSync(full)) });
      }
    }
  };
  walk(dir);
  return files;
}

/**
 * The web console: `GET /` is its page and `GET /assets/*` its bundled scripts and styles, read from `dir` once
 * (only files that are there are served, so no path reaches outside it). They carry no data and need no token;
 * the page asks for the token and calls the API with it. Without a built console, `GET /` is 404 saying so.
 *
 * @example
 * new Hono().route('/', consoleRoutes(defaultConsoleDir()));
 */
export function consoleRoutes(dir: string) {
  const assets = readAssets(dir);
  const send = (asset: Asset, cache: string) =>
    new Response(asset.body, {
      headers: {
        'content-type': asset.type,
        'cache-control': cache,
        'content-security-policy': CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      },
    });
  return new Hono()
    .get('/', (c) => {
      const page = assets.get('/index.html');
      if (page) return send(page, 'no-cache');
      const message = `the web console is not built (no ${join(dir, 'index.html')}): run npm run build`;
      return errorResponse(c, new LibosError('not_found', message, { details: { path: '/' } }));
    })
    .get('/assets/*', (c, next) => {
      const asset = assets.get(c.req.path);
      // Hashed file names: a file's content never changes under its name.
      return asset ? send(asset, 'public, max-age=31536000, immutable') : next();
    });
}
