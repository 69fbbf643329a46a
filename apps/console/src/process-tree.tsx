import type { ProcessInfo } from '@libos/client';

interface Node {
  readonly p: ProcessInfo;
  readonly children: Node[];
}

/** Roots first, children under their parent, each level oldest first (the server lists oldest first). */
function forest(all: readonly ProcessInfo[]): Node[] {
  const nodes = new Map(all.map((p) => [p.pid, { p, children: [] as Node[] }]));
  const roots: Node[] = [];
  for (const n of nodes.values()) {
    const parent = n.p.parent_pid ? nodes.get(n.p.parent_pid) : undefined;
    (parent ? parent.children : roots).push(n);
  }
  return roots;
}

export function StatusBadge(props: { readonly status: string }) {
  return <span class={`badge status-${props.status}`}>{props.status}</span>;
}

function Branch(props: { readonly nodes: readonly Node[]; readonly selected: string | null; readonly onSelect: (pid: string) => void }) {
  return (
    <ul class="tree">
      {props.nodes.map(({ p, children }) => (
        <li key={p.pid}>
          <button
            type="button"
            class={`tree-item${p.pid === props.selected ? ' selected' : ''}`}
            onClick={() => props.onSelect(p.pid)}
            data-testid={`process-${p.pid}`}
            data-status={p.status}
          >
            <StatusBadge status={p.status} />
            <code>{p.pid}</code>
            <span class="muted">{p.image_id}</span>
            <span class="goal">{p.goal}</span>
          </button>
          {children.length > 0 && <Branch nodes={children} selected={props.selected} onSelect={props.onSelect} />}
        </li>
      ))}
    </ul>
  );
}

/** The process tree with each process's status; a click selects one. */
export function ProcessTree(props: {
  readonly processes: readonly ProcessInfo[];
  readonly selected: string | null;
  readonly onSelect: (pid: string) => void;
}) {
  if (props.processes.length === 0) return <p class="muted">No processes yet.</p>;
  return <Branch nodes={forest(props.processes)} selected={props.selected} onSelect={props.onSelect} />;
}
