/** The service name under which the kernel provides `WorkingDirectoryService`. */
export const WORKING_DIRECTORY_SERVICE = 'working_directory';

/**
 * The working directory of each process (provided by the kernel as `working_directory`). It is part of the process
 * record: a child starts with its parent's, `exec_process` keeps it, and whatever captures a process captures it.
 * The kernel stores the text it is given; the plugin that sets it (e.g. `@libos/workspace`) decides what a valid
 * directory is and which authority changing it needs. A new root process starts at `.` unless its spawn names one.
 *
 * @example
 * const dirs = scope.service<WorkingDirectoryService>(WORKING_DIRECTORY_SERVICE);
 * await dirs.set(pid, '/srv/app');
 * await dirs.get(pid); // '/srv/app'
 */
export interface WorkingDirectoryService {
  /** The stored working directory of `pid` (`process_not_found` for an unknown pid). */
  get(pid: string): Promise<string>;
  /** Replaces it, in the caller's transaction (`invalid_state` for a terminal process). */
  set(pid: string, path: string): Promise<void>;
}
