// What `inspect_checkpoint` reports changed since a checkpoint: per kind, the items added, removed and changed.

/** What changed of one kind since a checkpoint. */
export interface KindDiff {
  readonly added: readonly (Readonly<Record<string, unknown>> & { readonly id: string })[];
  readonly removed: readonly (Readonly<Record<string, unknown>> & { readonly id: string })[];
  readonly changed: readonly {
    readonly id: string;
    readonly from: Readonly<Record<string, unknown>>;
    readonly to: Readonly<Record<string, unknown>>;
  }[];
  /** Exact counts (the lists stop at the cap). */
  readonly counts: { readonly added: number; readonly removed: number; readonly changed: number };
}

/** What changed since a checkpoint, by kind (`processes`, `objects`, `grants`, `tasks`, ...). */
export type StateDiff = Readonly<Record<string, KindDiff>>;
