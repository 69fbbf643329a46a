import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capabilities } from '@libos/capabilities';
import { openRuntime, type Runtime, type ToolCallResult } from '@libos/kernel';
import { createPayloadStore, objectMemory, type PayloadStore } from '@libos/object-memory';
import { definePlugin, sequentialIds, skillFromText, type Plugin } from '@libos/sdk';
import { session } from '@libos/session';
import { workspace, WORKSPACE_TOOLS, type WorkspaceOptions } from '@libos/workspace';

/**
 * Shared harness of the workspace scenarios: a real runtime over SQLite with the capability, Object Memory, session
 * and workspace plugins, a test image whose table holds every workspace tool, and a real temporary directory.
 */

export const WORKSPACE_IMAGE = 'workspace-probe:v0';
export const WORKSPACE_SKILLS = ['agent-libos-filesystem', 'agent-libos-shell', 'agent-libos-git'];

const IMAGE_SKILL_MD = `---
name: workspace-probe
description: Holds the workspace test image.
---
An image for workspace tests.
`;

function imagePlugin(): Plugin {
  return definePlugin({
    name: 'workspace-probe',
    version: '0.0.0',
    skills: [skillFromText(IMAGE_SKILL_MD, 'workspace-probe')],
    tools: [],
    images: [
      {
        id: WORKSPACE_IMAGE,
        description: 'Every workspace tool plus process_exit.',
        systemPrompt: 'You are a workspace test agent.',
        promptMode: 'libos_default',
        defaultSkills: ['agent-libos-runtime-session', 'agent-libos-object-memory', ...WORKSPACE_SKILLS],
        defaultTools: ['process_exit', 'read_memory_object', ...WORKSPACE_TOOLS],
      },
    ],
  });
}

export interface WorkspaceHarness {
  readonly rt: Runtime;
  /** A real (symlink-free) temporary directory, removed by `close`. */
  readonly dir: string;
  /**
   * The last payload the runtime held for each Object, kept after the Object is released: a root's exit releases what
   * it owns (session S-E8), so a test checks afterwards what its Objects held while it worked.
   */
  readonly heldPayloads: ReadonlyMap<string, unknown>;
  close(): Promise<void>;
}

/** A payload store that remembers the last payload of every Object, even once the runtime drops it. */
function recordingPayloadStore(): { store: PayloadStore; held: Map<string, unknown> } {
  const store = createPayloadStore();
  const held = new Map<string, unknown>();
  return {
    held,
    store: {
      ...store,
      set(oid, payload) {
        store.set(oid, payload);
        held.set(oid, store.get(oid));
      },
      planAppend(oid, listField, entry, size) {
        const plan = store.planAppend(oid, listField, entry, size);
        return {
          ...plan,
          apply() {
            const undo = plan.apply();
            held.set(oid, store.get(oid));
            return undo;
          },
        };
      },
    },
  };
}

/** Opens the runtime on `:memory:` (or `path`), with a fresh temporary directory as the workspace base. */
export async function openWorkspaceHarness(opts: { path?: string; workspace?: WorkspaceOptions } = {}): Promise<WorkspaceHarness> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'libos-ws-')));
  const payloads = recordingPayloadStore();
  const rt = await openRuntime({
    path: opts.path ?? ':memory:',
    plugins: [
      capabilities(),
      objectMemory({ payloadStore: payloads.store }),
      session(),
      workspace({ baseDirectory: dir, ...(opts.workspace ?? {}) }),
      imagePlugin(),
    ],
    config: { ids: sequentialIds(0) },
  });
  return {
    rt,
    dir,
    heldPayloads: payloads.held,
    async close() {
      await rt.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** Calls a tool and returns its payload; throws (failing the test) when the call failed. */
export async function ok(rt: Runtime, pid: string, tool: string, args: Record<string, unknown> = {}): Promise<Json> {
  const r = await rt.call(pid, tool, args);
  if (!r.ok) throw new Error(`${tool} failed: ${JSON.stringify(r.error)}`);
  return r.payload;
}

/** Calls a tool that must fail and returns its error. */
export async function fails(
  rt: Runtime,
  pid: string,
  tool: string,
  args: Record<string, unknown> = {},
  signal?: AbortSignal,
): Promise<{ code: string; message: string; details?: Json }> {
  const r: ToolCallResult = await rt.call(pid, tool, args, signal ? { signal } : {});
  if (r.ok) throw new Error(`${tool} unexpectedly succeeded: ${JSON.stringify(r.payload)}`);
  return r.error;
}

/** Runs git in `cwd` (host-side setup of fixtures), with a fixed identity. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: cwd,
      GIT_AUTHOR_NAME: 'Fixture',
      GIT_AUTHOR_EMAIL: 'fixture@example.invalid',
      GIT_COMMITTER_NAME: 'Fixture',
      GIT_COMMITTER_EMAIL: 'fixture@example.invalid',
    },
  });
}

/** True while `pid` is a live process: it exists and is not a zombie (an ended process a container's init may never reap). */
export function isAlive(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}
