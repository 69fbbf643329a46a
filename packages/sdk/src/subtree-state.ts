import type { ServiceScope } from './context.js';

/**
 * Subtree state: how the durable rows of one process subtree are captured, restored and forked without any package
 * touching another's tables. Each owner of state (the kernel for processes, mailbox and saved calls; the authority
 * engine for grants and budgets; Object Memory for namespaces, Objects, payloads and views; ObjectTasks for task
 * records) contributes a `SubtreeStateContributor` for its own tables. The kernel runs them in one transaction
 * (`SubtreeStateService`), so a checkpoint package needs nothing but this contract.
 */

/** The processes one capture covers: an owner process and every descendant (any status), oldest first. */
export interface Subtree {
  readonly rootPid: string;
  readonly pids: readonly string[];
}

/**
 * Content a part keeps beside its rows by reference (e.g. an Object payload): the checkpoint stores it
 * content-addressed and hands it back, hash-checked, on restore.
 */
export interface StateBlob {
  /** What it belongs to, unique within the part (e.g. `object:obj_…`): size refusals name it. */
  readonly ref: string;
  /** A JSON value. */
  readonly value: unknown;
}

/** One contributor's share of a capture: its own rows (in its own format) and its blobs. */
export interface StatePart {
  readonly data: unknown;
  readonly blobs?: readonly StateBlob[];
}

/** One thing a part holds, as inspect and diff show it (a process, an Object, a grant, a task...). */
export interface StateItem {
  /** e.g. `process`, `object`, `grant`, `task`. */
  readonly kind: string;
  readonly id: string;
  /** The facts a diff compares (status, version, uses...). */
  readonly state: Readonly<Record<string, unknown>>;
}

/** What a restore gives every contributor. */
export interface StateRestoreContext {
  readonly checkpointId: string;
  /** When the part was captured (ISO-8601): rows changed after it are what the restore replaces. */
  readonly capturedAt: string;
  /** The part's blobs by ref, already hash-checked. */
  readonly blobs: ReadonlyMap<string, unknown>;
  /** Adds facts to the restore's report under the contributor's key (ids restored, released, superseded...). */
  report(facts: Readonly<Record<string, unknown>>): void;
}

/** What a fork gives every contributor: the restore context plus one id map shared by all of them. */
export interface StateForkContext extends StateRestoreContext {
  /** The new subtree's root (the renamed captured root). */
  readonly rootPid: string;
  /**
   * The new id of an old one (`pid_…`, `obj_…`): the same prefix, the same answer for every contributor and call,
   * allocated on first use. Only ids a contributor copies should be renamed.
   */
  rename(oldId: string): string;
  /** The new id of an old one if some contributor renamed it, else undefined. */
  renamed(oldId: string): string | undefined;
}

/**
 * A package's share of subtree capture, restore and fork, for its own tables only. Every method runs in the
 * caller's transaction (`scope.store`); a throw rolls the whole operation back.
 *
 * Restore rules every contributor keeps: logs are append-only (audit, events, LLM calls, human history are never
 * deleted or rewritten); a finite use spent since the capture is not refunded; a grant revoked since stays revoked;
 * effects outside the store are not undone.
 */
export interface SubtreeStateContributor {
  /** Unique across contributors, e.g. `kernel`, `capabilities`, `objects`, `tasks`. */
  readonly key: string;
  capture(scope: ServiceScope, subtree: Subtree): Promise<StatePart>;
  /** The items of a part, for inspect and diff (no blobs needed). */
  describe(part: StatePart): readonly StateItem[];
  /** Refuses a restore before anything is written (e.g. an active task in scope). */
  checkRestore?(scope: ServiceScope, subtree: Subtree, part: StatePart, ctx: StateRestoreContext): Promise<void>;
  /** Puts the contributor's rows of `subtree` back as `part` holds them. */
  restore(scope: ServiceScope, subtree: Subtree, part: StatePart, ctx: StateRestoreContext): Promise<void>;
  /** Copies `part` to a new subtree under renamed ids. Omitted: the contributor's rows are not forked. */
  fork?(scope: ServiceScope, subtree: Subtree, part: StatePart, ctx: StateForkContext): Promise<void>;
}

/** A capture of every contributor's part, in one transaction. */
export interface SubtreeCapture {
  readonly subtree: Subtree;
  readonly capturedAt: string;
  /** Parts by contributor key. */
  readonly parts: Readonly<Record<string, StatePart>>;
}

/** What a restore or a fork did, by contributor key. */
export interface SubtreeStateReport {
  readonly facts: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** A captured state to put back (`SubtreeStateService.restore`) or to copy (`fork`). */
export interface SubtreeStateInput {
  readonly checkpointId: string;
  readonly subtree: Subtree;
  readonly capturedAt: string;
  readonly parts: Readonly<Record<string, StatePart>>;
  /** Blobs by contributor key, then ref (hash-checked by the caller). */
  readonly blobs: Readonly<Record<string, ReadonlyMap<string, unknown>>>;
}

/**
 * The kernel's orchestration of subtree state (provided by the kernel as `subtree_state`), in the caller's
 * transaction.
 *
 * @example
 * const state = scope.service<SubtreeStateService>(SERVICE_NAMES.subtreeState);
 * const capture = await state.capture(await state.subtree(pid));
 */
export interface SubtreeStateService {
  /** `rootPid` and every descendant, oldest first (`process_not_found` for an unknown pid). */
  subtree(rootPid: string): Promise<Subtree>;
  /** Every contributor's part. */
  capture(subtree: Subtree): Promise<SubtreeCapture>;
  /** The items of captured parts (every contributor's `describe`). */
  describe(parts: Readonly<Record<string, StatePart>>): readonly StateItem[];
  /**
   * Puts the subtree back as captured, at a safe point: `invalid_state` while a quantum of a process in it runs;
   * contributors' `checkRestore` refusals (e.g. an active task) before anything is written.
   */
  restore(input: SubtreeStateInput): Promise<SubtreeStateReport>;
  /** Copies the captured subtree under new ids: a new root tree. Returns the new root and the id map. */
  fork(
    input: SubtreeStateInput,
  ): Promise<SubtreeStateReport & { readonly rootPid: string; readonly ids: Readonly<Record<string, string>> }>;
}
