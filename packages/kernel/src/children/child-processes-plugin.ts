import { definePlugin, skillFromFile, type Plugin } from '@libos/sdk';
import type { KernelDeps } from '../internal/kernel-deps.js';
import { CHILD_PROCESSES_SKILL_URL } from '../skill-files.js';
import { childProcessTools } from './child-process-tools.js';
import { forkChildProcess } from './fork-child-process.js';
import { mailboxTools } from '../mailbox/mailbox-tools.js';

/** The kernel's child-processes Skill: children, mailbox and human questions. */
export function childProcessesPlugin(deps: () => KernelDeps): Plugin {
  return definePlugin({
    name: '@libos/kernel:child-processes',
    version: '0.1.0',
    skills: [skillFromFile(CHILD_PROCESSES_SKILL_URL)],
    tools: [...childProcessTools(deps), forkChildProcess(deps), ...mailboxTools(deps)],
  });
}
