import type { Selectable } from 'kysely';
import type { ProcessStatus } from '@libos/sdk';
import type { ProcessesTable } from '../store/kernel-database.js';

// The process vocabulary lives in @libos/sdk (process-status.ts); the kernel re-exports it for its own modules.
export {
  PROCESS_STATUSES,
  TERMINAL_PROCESS_STATUSES,
  TOOL_CALLABLE_STATUSES,
  isTerminalProcessStatus,
  type ProcessStatus,
} from '@libos/sdk';

/** A Skill loaded on one process: a snapshot of its package hash and tools. */
export interface LoadedSkill {
  readonly packageSha256: string;
  readonly tools: readonly string[];
}

/** The public view of an AgentProcess. */
export interface ProcessInfo {
  readonly pid: string;
  readonly parentPid: string | null;
  readonly imageId: string;
  readonly status: ProcessStatus;
  readonly waitState: Readonly<Record<string, unknown>> | null;
  readonly outcome: Readonly<Record<string, unknown>> | null;
  readonly stateGeneration: number;
  readonly revision: number;
  readonly goal: string;
  readonly goalOid: string | null;
  /**
   * Callable tool table: the image's default tools, plus the tools of each Skill loaded on the process unless the
   * image's table is `exact`.
   */
  readonly toolTable: readonly string[];
  /** Loaded Skills by name; the visible (model) table is derived from them. */
  readonly loadedSkills: Readonly<Record<string, LoadedSkill>>;
  /** Tools this process can see and call: tools of its loaded Skills that are in its tool table. */
  readonly visibleTools: readonly string[];
  readonly workingDirectory: string;
  readonly llmProfileId: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** The visible table: every tool of a loaded Skill that is also in the callable table, sorted. */
export function visibleTools(toolTable: readonly string[], loaded: Readonly<Record<string, LoadedSkill>>): string[] {
  const callable = new Set(toolTable);
  const out = new Set<string>();
  for (const s of Object.values(loaded)) for (const t of s.tools) if (callable.has(t)) out.add(t);
  return [...out].sort();
}

/** A `processes` row as SQLite returns it (JSON columns as text). */
export type ProcessRow = Selectable<ProcessesTable>;

export function rowToProcess(r: ProcessRow): ProcessInfo {
  const toolTable = JSON.parse(r.tool_table) as string[];
  const loadedSkills = JSON.parse(r.loaded_skills) as Record<string, LoadedSkill>;
  return {
    pid: r.pid,
    parentPid: r.parent_pid,
    imageId: r.image_id,
    status: r.status,
    waitState: r.wait_state ? JSON.parse(r.wait_state) : null,
    outcome: r.outcome ? JSON.parse(r.outcome) : null,
    stateGeneration: Number(r.state_generation),
    revision: Number(r.revision),
    goal: r.goal,
    goalOid: r.goal_oid,
    toolTable,
    loadedSkills,
    visibleTools: visibleTools(toolTable, loadedSkills),
    workingDirectory: r.working_directory,
    llmProfileId: r.llm_profile_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
