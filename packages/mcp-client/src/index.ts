export {
  connectMcpServers,
  MCP_CLIENT_INFO,
  type McpClientHandle,
  type McpConnection,
  type McpConnections,
  type McpServerSpec,
  type McpToolInfo,
} from './connect.js';
export { mcpClientPlugin, mcpSkillName, mcpToolResource, mcpToolSink, MAX_RESULT_BYTES } from './plugin.js';
export { MCP_CLIENT_ERRORS } from './errors.js';
