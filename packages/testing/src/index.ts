/**
 * `@libos/testing`: the plugin test kit. A real runtime (the kernel over SQLite `:memory:` or a temp file) with the
 * plugins under test, a fake clock and sequential ids, and helpers to spawn, grant and call.
 *
 * @example
 * const t = await openTestRuntime({ plugins: [myPlugin()] });
 * const pid = await t.spawn({ grants: [['object_namespace:*', ['read', 'write']]] });
 * await t.ok(pid, 'my_tool', { n: 1 });
 */
export { FakeClock } from './fake-clock.js';
export {
  openTestRuntime,
  TestRuntime,
  TEST_IMAGE,
  type TestCallError,
  type TestRuntimeOptions,
  type TestSpawnOptions,
} from './test-runtime.js';
