import type { HumanRequest, LibosClient, RespondInput } from '@libos/client';
import { useState } from 'preact/hooks';
import { usePerform } from './confirm.js';
import { brief, clock } from './format.js';

type Policy = NonNullable<RespondInput['decision']>['policy'];

function Request(props: { readonly client: LibosClient; readonly r: HumanRequest; readonly onSelect: (pid: string) => void }) {
  const { client, r } = props;
  const perform = usePerform();
  const [answer, setAnswer] = useState('');
  const [always, setAlways] = useState(false);
  const respond = (label: string, body: RespondInput) => void perform(label, () => client.respond(r.id, body));
  const decision = (policy: Policy) => (always ? { decision: { policy } } : {});
  const details = r.details as Record<string, unknown>;

  return (
    <li class="request" data-testid={`request-${r.id}`} data-kind={r.kind}>
      <div class="row">
        <span class="badge">{r.kind}</span>
        <button type="button" class="link" onClick={() => props.onSelect(r.pid)}>
          <code>{r.pid}</code>
        </button>
        <span class="muted">{clock(r.created_at)}</span>
      </div>
      <p class="prompt">{r.prompt}</p>
      {r.kind === 'permission' && details.resource !== undefined && (
        <p class="muted">
          {String(details.resource)} · {brief(details.rights)}
        </p>
      )}
      {r.kind === 'question' ? (
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (answer.trim() !== '') respond('Answer', { approved: true, answer });
          }}
        >
          <input
            class="grow"
            value={answer}
            onInput={(e) => setAnswer(e.currentTarget.value)}
            placeholder="your answer"
            aria-label="answer"
            data-testid="answer-input"
          />
          <button type="submit" data-testid="answer">
            Answer
          </button>
          <button type="button" class="danger" onClick={() => respond('Reject', { approved: false })} data-testid="reject">
            Reject
          </button>
        </form>
      ) : (
        <div class="row">
          <button type="button" onClick={() => respond('Approve', { approved: true, ...decision('always_allow') })} data-testid="approve">
            Approve
          </button>
          <button
            type="button"
            class="danger"
            onClick={() => respond('Reject', { approved: false, ...decision('always_deny') })}
            data-testid="reject"
          >
            Reject
          </button>
          <label class="muted">
            <input type="checkbox" checked={always} onChange={(e) => setAlways(e.currentTarget.checked)} /> and remember
          </label>
        </div>
      )}
    </li>
  );
}

/** The pending human requests: approve or reject a permission (optionally for good), answer or reject a question. */
export function HumanQueue(props: {
  readonly client: LibosClient;
  readonly pending: readonly HumanRequest[];
  readonly onSelect: (pid: string) => void;
}) {
  if (props.pending.length === 0)
    return (
      <p class="muted" data-testid="queue-empty">
        Nothing waits for you.
      </p>
    );
  return (
    <ul class="queue" data-testid="human-queue">
      {props.pending.map((r) => (
        <Request key={r.id} client={props.client} r={r} onSelect={props.onSelect} />
      ))}
    </ul>
  );
}
