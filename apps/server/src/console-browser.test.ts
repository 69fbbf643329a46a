import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { capabilities } from '@libos/capabilities';
import { openRuntime, ScriptedProvider, type Runtime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConsoleDir } from './console.js';
import { serve, type RunningServer } from './serve.js';

// The web console in a real browser: Debian's chromium driven by playwright-core (CI installs it with apt).
const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/', import.meta.url));
const WAIT = { timeout: 30_000 };

// Every process plays the same script: it asks for a permission, then (resumed once approved) exits.
const provider = new ScriptedProvider({
  processes: {
    '*': [
      [{ tool: 'request_permission', args: { resource: 'object_namespace:team', rights: ['write'], reason: "I keep the team's notes" } }],
      [{ tool: 'process_exit', args: { message: 'notes kept' } }],
    ],
  },
});
let rt: Runtime;
let server: RunningServer;
let profileDir: string;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  if (!existsSync(join(defaultConsoleDir(), 'index.html'))) throw new Error('the web console is not built: npm run build');
  rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), tasks(), session()] });
  server = await serve({ runtime: rt, provider });
  profileDir = mkdtempSync(join(tmpdir(), 'libos-console-chromium-'));
  const viewport = { width: 1400, height: 900 };
  context = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, headless: true, args: ARGS, viewport });
  page = context.pages()[0] ?? (await context.newPage());
}, 90_000);

afterAll(async () => {
  await context?.close();
  await server?.close();
  await rt?.close();
  if (profileDir) rmSync(profileDir, { recursive: true, force: true });
});

describe('web console (chromium)', () => {
  it('a process waiting on a permission request: approved in the page, it resumes and exits; a terminate asks first', async () => {
    const asker = await rt.spawn({ goal: 'keep the team notes' });
    await rt.grant(asker.pid, 'human:owner', ['write']);
    await rt.activateSkill(asker.pid, 'agent-libos-authority');
    await rt.activateSkill(asker.pid, 'agent-libos-object-memory');
    const payload = { secret: 'payload-never-shown' };
    const ledger = await rt.call(asker.pid, 'create_memory_object', { type: 'plan', name: 'ledger', payload });
    expect(ledger).toMatchObject({ ok: true });
    const parked = await rt.run({ provider, maxQuanta: 1 });
    expect(parked.results[0]).toMatchObject({ pid: asker.pid, stopReason: 'waiting_human' });
    const [req] = await rt.humanRequests({ status: 'pending' });

    // The token travels in the fragment; the page drops it from the address bar and keeps it for the tab.
    await page.goto(server.consoleUrl);
    expect(new URL(page.url()).hash).toBe('');
    const item = page.getByTestId(`process-${asker.pid}`);
    await expect.poll(() => item.getAttribute('data-status', WAIT), WAIT).toBe('waiting_human');
    await page.getByTestId('connection').and(page.locator('[data-state="live"]')).waitFor(WAIT);
    await item.click();
    await page
      .getByTestId('process-detail')
      .and(page.locator(`[data-pid="${asker.pid}"]`))
      .waitFor(WAIT);
    await page.getByTestId('tool-table').getByText('request_permission', { exact: true }).waitFor(WAIT);
    const request = page.getByTestId(`request-${req!.id}`);
    await request.getByText("I keep the team's notes").waitFor(WAIT);
    // Objects show as metadata only.
    await page.getByTestId('tab-objects').click();
    await page.getByTestId('rows-objects').getByText('ledger', { exact: true }).waitFor(WAIT);
    expect(await page.content()).not.toContain('payload-never-shown');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'console.png'), fullPage: true });

    await request.getByTestId('approve').click();
    await page.getByTestId('queue-empty').waitFor(WAIT);
    await page.locator(`[data-testid="process-${asker.pid}"][data-status="runnable"]`).waitFor(WAIT);
    expect((await rt.humanRequests({ pid: asker.pid }))[0]).toMatchObject({ status: 'approved', response: { approved: true } });

    // Resumed by the server's scheduler: the saved request_permission call completes, then the process exits.
    await page.getByTestId('run-scheduler').click();
    await page.locator(`[data-testid="process-${asker.pid}"][data-status="exited"]`).waitFor(WAIT);
    await page.getByTestId('event-feed').locator('li[data-type="process_exited"]').first().waitFor(WAIT);
    const resumed = (await rt.events({ pid: asker.pid, type: 'tool_completed' })).map((e) => e.data.tool);
    expect(resumed).toEqual(expect.arrayContaining(['request_permission', 'process_exit']));
    const granted = expect.objectContaining({ resource: 'object_namespace:team', rights: ['write'] });
    expect(await rt.capabilities(asker.pid)).toEqual(expect.arrayContaining([granted]));

    // A high-risk action: the server refuses it unconfirmed, the page asks, and only a confirmation sends it again.
    const bystander = await rt.spawn({ goal: 'idle until terminated' });
    await page.getByTestId(`process-${bystander.pid}`).click();
    await page
      .getByTestId('process-detail')
      .and(page.locator(`[data-pid="${bystander.pid}"]`))
      .waitFor(WAIT);
    await page.getByTestId('signal-terminate').click();
    const dialog = page.getByTestId('confirm-dialog');
    await dialog.getByText('signal:terminate').first().waitFor(WAIT);
    expect((await rt.process(bystander.pid)).status).not.toBe('killed');
    expect((await rt.audit({ action: 'gui.confirmation_required' })).map((a) => a.target)).toEqual([`process:${bystander.pid}`]);
    await dialog.getByTestId('confirm-yes').click();
    await page.locator(`[data-testid="process-${bystander.pid}"][data-status="killed"]`).waitFor(WAIT);
    await page.screenshot({ path: join(ARTIFACTS, 'console-after.png'), fullPage: true });
  }, 120_000);
});
