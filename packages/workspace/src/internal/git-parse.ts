/** One changed path of `git status`: index and worktree codes of porcelain v1 (`M`, `A`, `D`, `R`, `?`, ` `...). */
export interface StatusEntry {
  readonly path: string;
  /** The source of a rename or copy. */
  readonly orig_path: string | null;
  readonly index: string;
  readonly worktree: string;
}

export interface StatusReport {
  readonly branch: string | null;
  readonly upstream: string | null;
  readonly ahead: number;
  readonly behind: number;
  readonly entries: StatusEntry[];
}

/**
 * Parses `git status --porcelain=v1 --branch -z`: the `## branch...upstream [ahead N, behind M]` header, then one
 * `XY path` record per change (a rename or copy is followed by its source path).
 *
 * @example
 * parseStatus('## main\0 M src/a.ts\0?? new.txt\0').entries; // [{ path: 'src/a.ts', index: ' ', worktree: 'M', ... }, ...]
 */
export function parseStatus(out: string): StatusReport {
  const records = out.split('\0');
  let branch: string | null = null;
  let upstream: string | null = null;
  let ahead = 0;
  let behind = 0;
  const entries: StatusEntry[] = [];
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    if (r === '') continue;
    if (r.startsWith('## ')) {
      const head = r.slice(3);
      const m = /^(.*?)(?:\.\.\.(\S+))?(?: \[(.*)\])?$/.exec(head)!;
      const name = m[1]!;
      branch = name.startsWith('No commits yet on ') ? name.slice('No commits yet on '.length) : name === 'HEAD (no branch)' ? null : name;
      upstream = m[2] ?? null;
      ahead = Number(/ahead (\d+)/.exec(m[3] ?? '')?.[1] ?? 0);
      behind = Number(/behind (\d+)/.exec(m[3] ?? '')?.[1] ?? 0);
      continue;
    }
    const index = r[0]!;
    const worktree = r[1]!;
    const path = r.slice(3);
    let orig: string | null = null;
    if (index === 'R' || index === 'C' || worktree === 'R' || worktree === 'C') orig = records[++i] ?? null;
    entries.push({ path, orig_path: orig, index, worktree });
  }
  return { branch, upstream, ahead, behind, entries };
}

export interface LogEntry {
  readonly commit: string;
  readonly parents: string[];
  readonly author_name: string;
  readonly author_email: string;
  readonly date: string;
  readonly subject: string;
}

/** The `--format` that `parseLog` reads: fields separated by US (0x1f), records ended by RS (0x1e). */
export const LOG_FORMAT = '%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%s%x1e';

/** Parses `git log --format=LOG_FORMAT`. */
export function parseLog(out: string): LogEntry[] {
  return out
    .split('\x1e')
    .map((r) => r.replace(/^\n/, ''))
    .filter((r) => r !== '')
    .map((r) => {
      const [commit, parents, author_name, author_email, date, subject] = r.split('\x1f');
      return {
        commit: commit!,
        parents: parents ? parents.split(' ') : [],
        author_name: author_name!,
        author_email: author_email!,
        date: date!,
        subject: subject ?? '',
      };
    });
}

export interface BranchEntry {
  readonly name: string;
  readonly current: boolean;
  readonly commit: string;
}

/** The `--format` that `parseBranches` reads. */
export const BRANCH_FORMAT = '%(refname:short)%1f%(HEAD)%1f%(objectname)';

/** Parses `git branch --list --format=BRANCH_FORMAT`. */
export function parseBranches(out: string): BranchEntry[] {
  return out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [name, head, commit] = l.split('\x1f');
      return { name: name!, current: head === '*', commit: commit ?? '' };
    });
}
