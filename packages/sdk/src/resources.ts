/**
 * Builders for the resource strings capabilities name (`kind:body`) and for the namespaces the kernel gives each
 * process. Build them here instead of by hand, so a kind is spelled once.
 *
 * @example
 * await ctx.authority.require(resources.namespace(ns), 'write', { code: 'namespace_denied' });
 * await ctx.authority.check(resources.object(oid), 'read');
 * await objects.lookup(namespaces.process(pid), 'ledger');
 */
export const resources = {
  /** One Object: `object:<oid>`. */
  object: (oid: string): string => `object:${oid}`,
  /** An Object Memory namespace: `object_namespace:<namespace>`. */
  namespace: (namespace: string): string => `object_namespace:${namespace}`,
  /** A process (audit targets, message sinks): `process:<pid>`. */
  process: (pid: string): string => `process:${pid}`,
  /** An ObjectTask: `object_task:<task_id>`. */
  objectTask: (taskId: string): string => `object_task:${taskId}`,
  /** A tool by name (audit targets, approvals): `tool:<name>`. */
  tool: (name: string): string => `tool:${name}`,
  /** A Skill (`execute` loads it): `skill:<skill_id>`. */
  skill: (skillId: string): string => `skill:${skillId}`,
  /** A process image (`read` boots it): `image:<image_id>`. */
  image: (imageId: string): string => `image:${imageId}`,
  /** A human (`write` asks or tells them), or one channel of theirs: `human:<name>[:<channel>]`. */
  human: (human: string, channel?: string): string => (channel === undefined ? `human:${human}` : `human:${human}:${channel}`),
  /** A human request: `human_request:<request_id>`. */
  humanRequest: (requestId: string): string => `human_request:${requestId}`,
  /** A checkpoint: `checkpoint:<checkpoint_id>`. */
  checkpoint: (checkpointId: string): string => `checkpoint:${checkpointId}`,
  /** A file or folder by absolute path: `fs:<path>`. */
  fs: (absolutePath: string): string => `fs:${absolutePath}`,
  /** A git repository by its root: `git:<root>`. */
  git: (root: string): string => `git:${root}`,
  /** A program a shell tool may run: `shell:<program>`. */
  shell: (program: string): string => `shell:${program}`,
  /** One tool of an MCP server: `mcp:<server>/<tool>`. */
  mcp: (server: string, tool: string): string => `mcp:${server}/${tool}`,
} as const;

/**
 * The namespaces the kernel and the standard plugins keep per process.
 *
 * @example
 * namespaces.process('pid_0000000000000001');     // 'process:pid_0000000000000001'
 * namespaces.toolResults('pid_0000000000000001'); // 'process:pid_0000000000000001/tool_results'
 */
export const namespaces = {
  /** A process's own namespace: `process:<pid>`. */
  process: (pid: string): string => `process:${pid}`,
  /** Where published tool results go: `process:<pid>/tool_results`. */
  toolResults: (pid: string): string => `process:${pid}/tool_results`,
  /** Where parsed test results go: `process:<pid>/test_results`. */
  testResults: (pid: string): string => `process:${pid}/test_results`,
} as const;
