import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRuntime, type GrantOptions, type OpenRuntimeOptions, type Runtime, type ToolCallResult } from '@libos/kernel';
import {
  definePlugin,
  parseSkillOrThrow,
  sequentialIds,
  SKILL_NAVIGATION,
  type ImageDefinition,
  type Plugin,
  type Right,
} from '@libos/sdk';
import { FakeClock } from './fake-clock.js';
import { VERSION } from './version.js';

/** The image `spawn` uses by default: the Skills and tools of every plugin under test, active from the start. */
export const TEST_IMAGE = 'test-agent:v0';

export interface TestRuntimeOptions {
  /** The plugins under test (the kernel's own are always loaded). */
  readonly plugins: readonly Plugin[];
  /** `memory` (default): SQLite `:memory:`. `file`: a SQLite file in a temp folder, removed at `close`; `reopen` needs it. */
  readonly store?: 'memory' | 'file';
  /** Where the fake clock starts (default 2026-01-01T00:00:00.000Z). */
  readonly start?: string | Date;
  /**
   * Kysely plugins of the store (`OpenRuntimeOptions.kyselyPlugins`): e.g. one whose `transformQuery` throws on an
   * INSERT into a chosen table, to fail that write inside a call's transaction from outside the plugin under test.
   */
  readonly kyselyPlugins?: OpenRuntimeOptions['kyselyPlugins'];
}

/** What `spawn` gives a process: an image, Skills to activate, and grants (`[resource, rights]`). */
export interface TestSpawnOptions {
  readonly goal?: string;
  /** Default: `TEST_IMAGE`. Pass `base-agent:v0` to start from the kernel's default image. */
  readonly image?: string;
  /** Skills activated after spawn, by the host. */
  readonly skills?: readonly string[];
  readonly grants?: readonly (readonly [resource: string, rights: readonly Right[]])[];
  /** Spawns a host-side child of this process instead of a root. */
  readonly parentPid?: string;
}

/** A failed call's error, as a model sees it. */
export type TestCallError = Extract<ToolCallResult, { ok: false }>['error'];

/**
 * A runtime for one test, built by `openTestRuntime`: the real kernel (ToolBroker, one transaction per call, the
 * authority engine) over SQLite, with the plugins under test, a `FakeClock` and sequential ids
 * (`pid_0000000000000001`, ...), so what a test sees is the same on every run.
 */
export class TestRuntime {
  readonly clock: FakeClock;
  #rt: Runtime;
  readonly #opts: TestRuntimeOptions;
  readonly #path: string;
  readonly #dir: string | null;
  readonly #ids = sequentialIds();

  private constructor(rt: Runtime, clock: FakeClock, opts: TestRuntimeOptions, path: string, dir: string | null) {
    this.#rt = rt;
    this.clock = clock;
    this.#opts = opts;
    this.#path = path;
    this.#dir = dir;
  }

  /** @internal use `openTestRuntime`. */
  static async open(opts: TestRuntimeOptions): Promise<TestRuntime> {
    const clock = new FakeClock(opts.start);
    const dir = opts.store === 'file' ? mkdtempSync(join(tmpdir(), 'libos-test-')) : null;
    const path = dir ? join(dir, 'libos.db') : ':memory:';
    const t = new TestRuntime(null as unknown as Runtime, clock, opts, path, dir);
    t.#rt = await t.#openAt();
    return t;
  }

  #openAt(): Promise<Runtime> {
    return openRuntime({
      path: this.#path,
      plugins: [...this.#opts.plugins, testImagePlugin(this.#opts.plugins)],
      config: { clock: this.clock, ids: this.#ids },
      ...(this.#opts.kyselyPlugins ? { kyselyPlugins: this.#opts.kyselyPlugins } : {}),
    });
  }

  /** The runtime itself, for what the helpers do not cover (`audit`, `events`, `capabilities`, `run`, ...). */
  get runtime(): Runtime {
    return this.#rt;
  }

  /** Spawns a process (a root unless `parentPid`), activates `skills` and grants `grants`; returns its pid. */
  async spawn(opts: TestSpawnOptions = {}): Promise<string> {
    const goal = opts.goal ?? 'test';
    const p = await this.#rt.spawn({ goal, image: opts.image ?? TEST_IMAGE, ...(opts.parentPid ? { parentPid: opts.parentPid } : {}) });
    for (const [resource, rights] of opts.grants ?? []) await this.#rt.grant(p.pid, resource, rights);
    for (const skill of opts.skills ?? []) await this.#rt.activateSkill(p.pid, skill);
    return p.pid;
  }

  /** Grants `pid` `rights` on `resource` as the host (trusted issue). */
  grant(pid: string, resource: string, rights: readonly Right[], opts: GrantOptions = {}): ReturnType<Runtime['grant']> {
    return this.#rt.grant(pid, resource, rights, opts);
  }

  /** Calls `tool` as `pid` through the ToolBroker, exactly as a model's call runs. */
  call(pid: string, tool: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
    return this.#rt.call(pid, tool, args);
  }

  /** Calls `tool` and returns its payload; throws, naming the error, when the call failed. */
  async ok<T = any>(pid: string, tool: string, args: Record<string, unknown> = {}): Promise<T> {
    const r = await this.#rt.call(pid, tool, args);
    if (!r.ok) throw new Error(`${tool} failed: ${JSON.stringify(r.error)}`);
    return r.payload as T;
  }

  /** Calls `tool`, which must fail, and returns its error; throws when the call succeeded. */
  async fails(pid: string, tool: string, args: Record<string, unknown> = {}): Promise<TestCallError> {
    const r = await this.#rt.call(pid, tool, args);
    if (r.ok) throw new Error(`${tool} unexpectedly succeeded: ${JSON.stringify(r.payload)}`);
    return r.error;
  }

  /** Closes the runtime and opens the same store again (a `file` store only), ids continuing where they were. */
  async reopen(): Promise<void> {
    if (!this.#dir) throw new TypeError('TestRuntime.reopen: only a file store can be reopened (openTestRuntime({ store: "file" }))');
    await this.#rt.close();
    this.#rt = await this.#openAt();
  }

  /** Closes the runtime and removes a file store's folder. */
  async close(): Promise<void> {
    await this.#rt.close();
    if (this.#dir) rmSync(this.#dir, { recursive: true, force: true });
  }
}

/** A plugin with one image, `TEST_IMAGE`: Skill navigation plus every Skill and tool of the plugins under test. */
function testImagePlugin(plugins: readonly Plugin[]): Plugin {
  const skills = plugins.flatMap((p) => (p.skills ?? []).map((s) => parseSkillOrThrow(s).name));
  const tools = plugins.flatMap((p) => (p.tools ?? []).map((t) => t.name));
  const image: ImageDefinition = {
    id: TEST_IMAGE,
    description: 'A test agent with the Skills and tools of the plugins under test.',
    systemPrompt: 'You are a test agent.',
    promptMode: 'libos_default',
    defaultSkills: [SKILL_NAVIGATION, ...skills],
    defaultTools: ['discover_skills', 'activate_skill', 'unload_skill', ...tools],
  };
  return definePlugin({ name: '@libos/testing', version: VERSION, skills: [], tools: [], images: [image] });
}

/**
 * Opens a runtime for one test with the plugins under test. Close it after the test (`afterEach`).
 *
 * @example
 * const t = await openTestRuntime({ plugins: [objectMemory()] });
 * const pid = await t.spawn();
 * expect(await t.ok(pid, 'create_memory_namespace', { namespace: 'proj' })).toMatchObject({ created: true });
 * expect((await t.fails(pid, 'create_memory_namespace', { namespace: 'proj' })).code).toBe('namespace_exists');
 * await t.close();
 */
export function openTestRuntime(opts: TestRuntimeOptions): Promise<TestRuntime> {
  return TestRuntime.open(opts);
}
