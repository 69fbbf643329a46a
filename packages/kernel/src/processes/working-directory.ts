import { LibosError, type ServiceScope, type WorkingDirectoryService } from '@libos/sdk';
import { TERMINAL_PROCESS_STATUSES } from './process-record.js';
import { getProcess } from './process-store.js';
import { storeOf } from '../store/kernel-scope.js';

/** Longest working directory text the kernel stores. */
export const MAX_WORKING_DIRECTORY_CHARS = 4_096;

/**
 * The kernel's `working_directory` service: the `working_directory` column of the process row (children copy their
 * parent's at spawn). `set` moves the row's revision, so a concurrent change of the same row is a `conflict`.
 *
 * @example
 * const dirs = workingDirectoryService(scope);
 * await dirs.set(pid, '/srv/app');
 */
export function workingDirectoryService(scope: ServiceScope): WorkingDirectoryService {
  const store = storeOf(scope);
  return {
    async get(pid) {
      return (await getProcess(store, pid)).workingDirectory;
    },
    async set(pid, path) {
      if (typeof path !== 'string' || path === '' || path.length > MAX_WORKING_DIRECTORY_CHARS || path.includes('\0')) {
        throw new LibosError('invalid_arguments', `working directory: must be 1..${MAX_WORKING_DIRECTORY_CHARS} characters without NUL`, {
          details: { field: 'path' },
        });
      }
      const p = await getProcess(store, pid);
      if (TERMINAL_PROCESS_STATUSES.has(p.status))
        throw new LibosError('invalid_state', `process ${pid} is ${p.status}; its working directory can no longer change`, {
          details: { pid },
        });
      const r = await store
        .updateTable('processes')
        .set({ working_directory: path, revision: p.revision + 1, updated_at: scope.clock.now().toISOString() })
        .where('pid', '=', pid)
        .where('revision', '=', p.revision)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1)
        throw new LibosError('conflict', `process ${pid} changed concurrently (revision ${p.revision}); retry`);
    },
  };
}
