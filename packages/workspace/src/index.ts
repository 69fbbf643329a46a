import { definePlugin, SERVICE_NAMES, skillFromFile, type AnyTool, type Plugin } from '@libos/sdk';
import { filesService } from './files-service.js';
import { settleConfig, type WorkspaceOptions } from './config.js';
import { FILESYSTEM_SKILL_URL, GIT_SKILL_URL, SHELL_SKILL_URL } from './skill-files.js';
import { deletePath } from './tools/delete-path.js';
import { editFile } from './tools/edit-file.js';
import { gitAdd } from './tools/git-add.js';
import { gitBranch } from './tools/git-branch.js';
import { gitCheckout } from './tools/git-checkout.js';
import { gitCommit } from './tools/git-commit.js';
import { gitDiff } from './tools/git-diff.js';
import { gitLog } from './tools/git-log.js';
import { gitShow } from './tools/git-show.js';
import { gitStatus } from './tools/git-status.js';
import { listFiles } from './tools/list-files.js';
import { makeDirectory } from './tools/make-directory.js';
import { parseTestLog } from './tools/parse-test-log.js';
import { readFile } from './tools/read-file.js';
import { runShellCommand } from './tools/run-shell-command.js';
import { searchFiles } from './tools/search-files.js';
import { getWorkingDirectory, setWorkingDirectory } from './tools/working-directory.js';
import { writeFile } from './tools/write-file.js';
import { VERSION } from './version.js';

export {
  settleConfig,
  DEFAULT_SHELL_LIMITS,
  DEFAULT_GIT_SETTINGS,
  type WorkspaceOptions,
  type WorkspaceConfig,
  type ShellLimits,
  type GitSettings,
} from './config.js';
export { DEFAULT_ENV_ALLOWLIST } from './env-allowlist.js';
export { filesService, FILES_SERVICE_MAX_READ_BYTES } from './files-service.js';
export { testResultsNamespace } from './tools/parse-test-log.js';
export { parseTestLogText } from './test-logs/parse-log.js';
export { TEST_LOG_FORMATS, type TestLogFormat, type TestReport } from './test-logs/test-report.js';
export { FILESYSTEM_SKILL_URL, SHELL_SKILL_URL, GIT_SKILL_URL } from './skill-files.js';

/** Tools of the filesystem Skill, in its `allowed-tools` order. */
export const FILESYSTEM_TOOLS = [
  'get_working_directory',
  'set_working_directory',
  'read_file',
  'write_file',
  'edit_file',
  'list_files',
  'search_files',
  'make_directory',
  'delete_path',
] as const;
/** Tools of the shell Skill. */
export const SHELL_TOOLS = ['run_shell_command', 'parse_test_log'] as const;
/** Tools of the git Skill. */
export const GIT_TOOLS = ['git_status', 'git_diff', 'git_log', 'git_show', 'git_add', 'git_commit', 'git_branch', 'git_checkout'] as const;
/** Every tool the plugin defines. */
export const WORKSPACE_TOOLS = [...FILESYSTEM_TOOLS, ...SHELL_TOOLS, ...GIT_TOOLS] as const;

/**
 * The workspace plugin: files (`agent-libos-filesystem`), commands and test evidence (`agent-libos-shell`) and git
 * (`agent-libos-git`), each call checked against `fs:`, `shell:` and `git:` grants of the calling process; plus the
 * working directory tools. It reaches the kernel only through the sdk's `working_directory` and `objects` services.
 *
 * @example
 * const rt = await openRuntime({ path: ':memory:', plugins: [capabilities(), objectMemory(), session(), workspace()] });
 * const repo = '/srv/app';
 * await rt.grant(pid, `fs:${repo}/*`, ['read', 'write']);
 */
export function workspace(options: WorkspaceOptions = {}): Plugin {
  const cfg = settleConfig(options);
  const tools: AnyTool[] = [
    getWorkingDirectory(cfg),
    setWorkingDirectory(cfg),
    readFile(cfg),
    writeFile(cfg),
    editFile(cfg),
    listFiles(cfg),
    searchFiles(cfg),
    makeDirectory(cfg),
    deletePath(cfg),
    runShellCommand(cfg),
    parseTestLog(cfg),
    gitStatus(cfg),
    gitDiff(cfg),
    gitLog(cfg),
    gitShow(cfg),
    gitAdd(cfg),
    gitCommit(cfg),
    gitBranch(cfg),
    gitCheckout(cfg),
  ];
  return definePlugin({
    name: '@libos/workspace',
    version: VERSION,
    skills: [skillFromFile(FILESYSTEM_SKILL_URL), skillFromFile(SHELL_SKILL_URL), skillFromFile(GIT_SKILL_URL)],
    tools,
    // The file provider other plugins use (e.g. Object files): the same path resolution, grants and audited writes.
    services: { [SERVICE_NAMES.files]: (scope) => filesService(cfg, scope) },
  });
}
