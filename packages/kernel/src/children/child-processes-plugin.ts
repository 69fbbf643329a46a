import { definePlugin, skillFromFile, WORKING_DIRECTORY_SERVICE, type Plugin } from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { workingDirectoryService } from '../processes/working-directory.js';
import { CHILD_PROCESSES_SKILL_URL } from '../skill-files.js';
import { childProcessTools } from './child-process-tools.js';
import { forkChildProcess } from './fork-child-process.js';
import { mailboxTools } from '../mailbox/mailbox-tools.js';
import { VERSION } from '../version.js';

/**
 * The kernel's child-processes Skill: children, mailbox and human questions; and the `working_directory` service,
 * the per-process directory children inherit at spawn (the workspace plugin reads and moves it).
 */
export function childProcessesPlugin(deps: () => KernelDeps): Plugin {
  return definePlugin({
    name: '@libos/kernel:child-processes',
    version: VERSION,
    skills: [skillFromFile(CHILD_PROCESSES_SKILL_URL)],
    tools: [...childProcessTools(deps), forkChildProcess(deps), ...mailboxTools(deps)],
    services: { [WORKING_DIRECTORY_SERVICE]: workingDirectoryService },
  });
}
