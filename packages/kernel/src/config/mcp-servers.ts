import { z } from '@libos/sdk';

/**
 * External MCP server names: lower-case words joined by `-`, at most 32 characters. The name is part of the Skill
 * (`mcp-<name>`), of each tool (`mcp_<name>_<tool>`) and of the resource a call needs (`mcp:<name>/<tool>`).
 */
export const MCP_SERVER_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

const text = (what: string, max: number) =>
  z
    .string({ error: `must be ${what}` })
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` });

/**
 * One external MCP server: a program the host starts and speaks to over stdio (`command`, `args`, `env`, `cwd`), or
 * a Streamable HTTP endpoint (`url`, `headers`). Exactly one of `command` and `url`. `timeout_seconds` bounds each
 * request to it (default 60).
 *
 * @example
 * ```json
 * { "command": "node", "args": ["./tools/weather-mcp.js"] }
 * { "url": "http://127.0.0.1:8931/mcp", "headers": { "authorization": "Bearer …" } }
 * ```
 */
export const mcpServerSchema = z
  .strictObject({
    command: text('a program name or path', 4096).optional(),
    args: z.array(text('a string', 32_768), { error: 'must be a list of strings' }).max(256).optional(),
    env: z.record(z.string(), z.string(), { error: 'must be an object of strings' }).optional(),
    cwd: text('a folder path', 4096).optional(),
    url: z
      .string({ error: 'must be an http(s) URL' })
      .refine(
        (s) => {
          try {
            const u = new URL(s);
            return u.protocol === 'http:' || u.protocol === 'https:';
          } catch {
            return false;
          }
        },
        { error: 'must be an http(s) URL such as http://127.0.0.1:8931/mcp' },
      )
      .optional(),
    headers: z.record(z.string(), z.string(), { error: 'must be an object of strings' }).optional(),
    timeout_seconds: z.number({ error: 'must be a number' }).positive({ error: 'must be a positive number' }).max(3600).default(60),
  })
  .superRefine((s, ctx) => {
    if ((s.command === undefined) === (s.url === undefined)) {
      ctx.addIssue({ code: 'custom', path: [], message: 'give exactly one of command (a stdio server) or url (a Streamable HTTP server)' });
    }
    for (const key of ['args', 'env', 'cwd'] as const) {
      if (s.url !== undefined && s[key] !== undefined)
        ctx.addIssue({ code: 'custom', path: [key], message: 'applies only to a stdio server (command)' });
    }
    if (s.command !== undefined && s.headers !== undefined)
      ctx.addIssue({ code: 'custom', path: ['headers'], message: 'applies only to an HTTP server (url)' });
  });

/** The host config's `mcp_servers`: external MCP servers by name. */
export const mcpServersSchema = z
  .record(
    z
      .string()
      .max(32, { error: 'server names must be at most 32 characters' })
      .regex(MCP_SERVER_NAME_PATTERN, { error: `server names must match ${MCP_SERVER_NAME_PATTERN}` }),
    mcpServerSchema,
    { error: 'must be an object of named servers' },
  )
  .default({});

/** One external MCP server as configured (defaults filled in). */
export type McpServerConfig = z.output<typeof mcpServerSchema>;
