import { describe, expect, it } from 'vitest';
import { createTestStore } from './internal/testing/test-store.js';

describe('engine smoke', () => {
  it('issues, requires and lists a grant in a real SQLite transaction', async () => {
    const s = await createTestStore();
    const pid = 'pid_0000000000000001';
    const rec = await s.run((scope) => s.engine.issueTrusted(scope, { subject: pid, resource: 'object:*', rights: ['read'] }, 'host'));
    const d = await s.run((scope) => s.engine.authority(scope, pid).require('object:obj_1', 'read'));
    expect(d.selectedId).toBe(rec.id);
    expect(await s.run((scope) => s.engine.list(scope, pid))).toHaveLength(1);
    await expect(s.run((scope) => s.engine.authority(scope, pid).require('object:obj_1', 'write'))).rejects.toMatchObject({
      code: 'permission_denied',
    });
    await s.close();
  });
});
