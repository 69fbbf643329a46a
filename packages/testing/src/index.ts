/**
 * `@libos/testing`: the plugin test kit. A real runtime (the kernel over SQLite `:memory:` or a temp file) with the
 * plugins under test, a fake clock and sequential ids, and helpers to spawn, grant and call. Start at `openTestRuntime`
 * (test-runtime.ts), whose example is a whole test.
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
