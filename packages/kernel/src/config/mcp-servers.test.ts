import { describe, expect, it } from 'vitest';
import { parseHostConfig } from './host-config.js';

describe('host config: mcp_servers', () => {
  it('takes stdio servers (command, args, env, cwd) and Streamable HTTP ones (url, headers); timeout_seconds defaults to 60', () => {
    const c = parseHostConfig({
      mcp_servers: {
        weather: { command: 'node', args: ['weather.js'], env: { UNITS: 'metric' } },
        'docs-search': { url: 'http://127.0.0.1:8931/mcp', headers: { authorization: 'Bearer x' }, timeout_seconds: 5 },
      },
    });
    expect(c.mcp_servers).toEqual({
      weather: { command: 'node', args: ['weather.js'], env: { UNITS: 'metric' }, timeout_seconds: 60 },
      'docs-search': { url: 'http://127.0.0.1:8931/mcp', headers: { authorization: 'Bearer x' }, timeout_seconds: 5 },
    });
    expect(parseHostConfig({}).mcp_servers).toEqual({});
  });

  it('refuses a bad server naming the key: both or neither of command and url, stdio keys on a url, a bad name or url', () => {
    const bad = (mcp_servers: unknown) => () => parseHostConfig({ mcp_servers }, 'host config test.json');
    expect(bad({ w: {} })).toThrow('mcp_servers.w: give exactly one of command (a stdio server) or url (a Streamable HTTP server)');
    expect(bad({ w: { command: 'node', url: 'http://127.0.0.1/mcp' } })).toThrow('mcp_servers.w: give exactly one of command');
    expect(bad({ w: { url: 'http://127.0.0.1/mcp', args: ['x'] } })).toThrow(
      'mcp_servers.w.args: applies only to a stdio server (command)',
    );
    expect(bad({ w: { command: 'node', headers: {} } })).toThrow('mcp_servers.w.headers: applies only to an HTTP server (url)');
    expect(bad({ w: { url: 'ftp://x' } })).toThrow('mcp_servers.w.url: must be an http(s) URL');
    expect(bad({ Weather_Now: { command: 'node' } })).toThrow('mcp_servers.Weather_Now: server names must match');
    expect(bad({ w: { command: 'node', colour: 'red' } })).toThrow('mcp_servers.w.colour: unknown key');
    expect(bad({ w: { command: 'node', timeout_seconds: 0 } })).toThrow('mcp_servers.w.timeout_seconds: must be a positive number');
  });
});
