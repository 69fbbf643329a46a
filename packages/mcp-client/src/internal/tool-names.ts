import { sha256Hex, TOOL_NAME_PATTERN } from '@libos/sdk';

/**
 * The libOS name of an external tool: `mcp_<server>_<tool>` in lower_snake (other characters become `_`), at most 64
 * characters. A name too long, or taken by another tool of the same server, ends in 8 hex digits of its digest.
 *
 * @example
 * libosToolName('docs-search', 'Search.Pages', new Set()); // 'mcp_docs_search_search_pages'
 */
export function libosToolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const snake = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/_+/g, '_')
      .replace(/^_|_$/g, '');
  const plain = `mcp_${snake(server)}_${snake(tool) || 'tool'}`;
  if (plain.length <= 64 && TOOL_NAME_PATTERN.test(plain) && !taken.has(plain)) return plain;
  return `${plain.slice(0, 55)}_${sha256Hex(`${server}/${tool}`).slice(0, 8)}`;
}
