import { LibosApiError, type ConfirmationRequired } from '@libos/client';
import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useState } from 'preact/hooks';
import { errorText, pretty } from './format.js';

/** Runs an operation; the server decides what is high-risk: its 409 asks the person, and only then is it re-sent confirmed. */
export type Perform = (label: string, op: (confirmed: boolean) => Promise<unknown>) => Promise<void>;

interface Asking {
  readonly label: string;
  readonly refusal: ConfirmationRequired;
  readonly op: (confirmed: boolean) => Promise<unknown>;
}

interface ConfirmState {
  readonly perform: Perform;
  readonly notice: string | null;
}

const Ctx = createContext<ConfirmState>({ perform: async () => {}, notice: null });

/** What a component uses to act: `perform(label, (confirmed) => client.signal(pid, 'terminate', { confirmed }))`. */
export function usePerform(): Perform {
  return useContext(Ctx).perform;
}

/**
 * Holds the confirmation dialog: an operation the server refuses with `confirmation_required` is shown (what would
 * run, and what was sent) and runs again with `confirmed: true` only when the person confirms. Other errors show in
 * the notice bar.
 */
export function ConfirmProvider(props: { readonly onDone: () => void; readonly children: ComponentChildren }) {
  const [asking, setAsking] = useState<Asking | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const perform = useCallback<Perform>(
    async (label, op) => {
      setNotice(null);
      try {
        await op(false);
        props.onDone();
      } catch (err) {
        if (err instanceof LibosApiError && err.confirmation) setAsking({ label, refusal: err.confirmation, op });
        else setNotice(`${label}: ${errorText(err)}`);
      }
    },
    [props.onDone],
  );

  const confirm = async () => {
    if (!asking) return;
    setBusy(true);
    try {
      await asking.op(true);
      props.onDone();
    } catch (err) {
      setNotice(`${asking.label}: ${errorText(err)}`);
    } finally {
      setBusy(false);
      setAsking(null);
    }
  };

  return (
    <Ctx.Provider value={{ perform, notice }}>
      {notice && (
        <div class="notice" role="alert" data-testid="notice">
          {notice}
          <button type="button" class="link" onClick={() => setNotice(null)}>
            dismiss
          </button>
        </div>
      )}
      {props.children}
      {asking && (
        <div class="overlay">
          <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="confirm-title" data-testid="confirm-dialog">
            <h2 id="confirm-title">Confirm {asking.refusal.action}</h2>
            <p>{asking.refusal.error.message}</p>
            <pre>{pretty(asking.refusal.preview)}</pre>
            <div class="row">
              <button type="button" class="danger" disabled={busy} onClick={() => void confirm()} data-testid="confirm-yes">
                {asking.label}
              </button>
              <button type="button" disabled={busy} onClick={() => setAsking(null)} data-testid="confirm-no">
                Cancel
              </button>
            </div>
          </div>
        </div>
      )}
    </Ctx.Provider>
  );
}
