// The SQLite schema a fresh store gets, pinned: the migrations of the kernel and of every standard plugin write
// through a dialect-neutral kit (issue 15), and on SQLite that kit must produce exactly the DDL they wrote before it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { capabilities } from '@libos/capabilities';
import { checkpoints } from '@libos/checkpoints';
import { openRuntime } from '@libos/kernel';
import { objectMemory } from '@libos/object-memory';
import { session } from '@libos/session';
import { tasks } from '@libos/tasks';
import { workspace } from '@libos/workspace';
import { afterEach, describe, expect, it } from 'vitest';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Every schema object of the store file, one `-- type name` header and its DDL each, in name order. */
function schemaText(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare('select type, name, sql from sqlite_master order by type, name').all() as {
      type: string;
      name: string;
      sql: string | null;
    }[];
    return rows.map((r) => `-- ${r.type} ${r.name}\n${r.sql ?? '(no sql)'};\n`).join('\n');
  } finally {
    db.close();
  }
}

describe('store schema on SQLite', () => {
  it('[K-15.1] a fresh store opened with every standard plugin has exactly the pinned DDL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'libos-schema-'));
    dirs.push(dir);
    const path = join(dir, 'libos.db');
    const plugins = [capabilities(), objectMemory(), tasks(), session(), workspace(), checkpoints()];
    const rt = await openRuntime({ path, plugins });
    await rt.close();
    await expect(schemaText(path)).toMatchFileSnapshot('./fixtures/sqlite-schema.sql');
  });
});
