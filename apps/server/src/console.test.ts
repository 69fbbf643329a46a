import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type Harness } from './internal/testing/harness.js';
import { rawRequest } from './internal/testing/raw-http.js';

let h: Harness | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await h?.stop();
  h = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A stand-in for the built console: an index.html and one hashed script. */
function builtConsole(): string {
  const dir = mkdtempSync(join(tmpdir(), 'libos-console-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="./assets/index-abc.js"></script>');
  writeFileSync(join(dir, 'assets', 'index-abc.js'), 'console.log(1)');
  return dir;
}

describe('the web console route', () => {
  it('GET / and its assets need no token (they hold no data) and carry a same-origin-only CSP; the API still does', async () => {
    h = await startServer({ consoleDir: builtConsole() });
    const page = await fetch(`${h.server.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await page.text()).toContain('./assets/index-abc.js');
    const script = await fetch(`${h.server.url}/assets/index-abc.js`);
    const served = { status: script.status, type: script.headers.get('content-type'), body: await script.text() };
    expect(served).toEqual({ status: 200, type: 'text/javascript; charset=utf-8', body: 'console.log(1)' });
    for (const path of ['/assets/nope.js', '/assets/../index.html', '/index.html', '/api/health']) {
      expect({ path, status: (await fetch(`${h.server.url}${path}`)).status }).toEqual({ path, status: 401 });
    }
  });

  it('the Host guard applies to the console too: a foreign Host is 403', async () => {
    h = await startServer({ consoleDir: builtConsole() });
    const r = await rawRequest(`${h.server.url}/`, { headers: { host: 'evil.example' } });
    expect(r.body).toMatchObject({ error: { code: 'permission_denied', details: { reason: 'host_not_allowed' } } });
    const status = r.status;
    expect(status).toBe(403);
  });

  it('without a built console, GET / is a 404 that says how to build it; consoleUrl carries the token in the fragment', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'libos-console-'));
    dirs.push(empty);
    h = await startServer({ consoleDir: empty });
    const r = await fetch(`${h.server.url}/`);
    expect(r.status).toBe(404);
    expect(await r.json()).toMatchObject({ error: { code: 'not_found', message: expect.stringContaining('npm run build') } });
    expect(h.server.consoleUrl).toBe(`${h.server.url}/#token=${h.server.token}`);
  });
});
