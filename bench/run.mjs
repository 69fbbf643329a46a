// Runs every benchmark under bench/ (each prints its ratio against a floor measured in the same run).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
let failed = 0;
for (const f of readdirSync(here).filter((f) => f.endsWith('.mjs') && f !== 'run.mjs').sort()) {
  console.log(`\n# ${f}`);
  const r = spawnSync(process.execPath, [`${here}${f}`], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
