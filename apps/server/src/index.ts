export { serve, type ServeOptions, type RunningServer } from './serve.js';
export { createApp, MAX_BODY_BYTES, type AppOptions, type AppType } from './app.js';
export { consoleRoutes, defaultConsoleDir } from './console.js';
export { bearerAuth, newToken } from './auth.js';
export { hostGuard, type HostGuardOptions } from './host-guard.js';
export { eventStream, sseEventName, SSE_CURSOR_NOT_REPLAYABLE, type EventStreamOptions } from './sse.js';
export { processMcpServer, toCallToolResult, MCP_SERVER_INFO, type ProcessMcpOptions } from './mcp.js';
export type { SchedulerState, SchedulerStatus } from './scheduler-status.js';
export { DEFAULT_SNAPSHOT_LIMITS, type SnapshotLimits } from './routes/snapshot.js';
