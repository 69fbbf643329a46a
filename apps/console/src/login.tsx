import { useState } from 'preact/hooks';

/** Asks for the bearer token `libos serve` printed (when the page was opened without `#token=`). */
export function Login(props: { readonly error: string | null; readonly onToken: (token: string) => void }) {
  const [token, setToken] = useState('');
  return (
    <main class="login">
      <h1>libOS console</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (token.trim() !== '') props.onToken(token.trim());
        }}
      >
        <label>
          Token (printed by <code>libos serve</code>)
          <input
            type="password"
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
            autoComplete="off"
            data-testid="token-input"
          />
        </label>
        <button type="submit">Open</button>
      </form>
      {props.error && <p class="error">{props.error}</p>}
    </main>
  );
}
