import { defineErrorCodes } from '@libos/sdk';

/**
 * The codes this package raises, under the closed categories: a server that cannot be reached or broke the
 * connection (`mcp_server_unavailable`, 503), and a tool that answered `isError` (`mcp_tool_error`, 409: the server
 * took the call and refused or failed it; its text is in the message).
 */
export const MCP_CLIENT_ERRORS = defineErrorCodes('@libos/mcp-client', {
  mcp_server_unavailable: 'unavailable',
  mcp_tool_error: 'conflict',
});
