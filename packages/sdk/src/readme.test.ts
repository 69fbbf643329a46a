import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The README's complete plugin is examples/weather-plugin, file for file: each block marked
// `<!-- example: <file> -->` must be that file of the package. The package itself is built by the workspace build,
// tested by its own test (examples/weather-plugin/src/index.test.ts) and packed and loaded by the libos command
// (apps/cli/src/weather-plugin.test.ts), so the README shows code that builds, loads and passes.

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const EXAMPLE = fileURLToPath(new URL('../../../examples/weather-plugin/', import.meta.url));

/** Every marked block: the file it names and its text (with a final newline, as files end). */
function markedBlocks(markdown: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /<!-- example: ([^ ]+) -->\r?\n```[a-z]*\r?\n([\s\S]*?)\r?\n```/g;
  for (let m = re.exec(markdown); m; m = re.exec(markdown)) {
    if (out.has(m[1]!)) throw new Error(`README.md shows ${m[1]} twice`);
    out.set(m[1]!, `${m[2]!}\n`);
  }
  return out;
}

describe('@libos/sdk README', () => {
  it('its complete plugin is examples/weather-plugin, file for file', () => {
    const blocks = markedBlocks(readFileSync(README, 'utf8'));
    expect([...blocks.keys()].sort()).toEqual(['package.json', 'skills/weather/SKILL.md', 'src/index.test.ts', 'src/index.ts']);
    for (const [file, text] of blocks) expect(text, file).toBe(readFileSync(`${EXAMPLE}${file}`, 'utf8'));
  });
});
