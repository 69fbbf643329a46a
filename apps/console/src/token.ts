const KEY = 'libos.console.token';

/**
 * The bearer token: taken from the URL fragment (`/#token=…`, as `libos serve` prints the console's address; a
 * fragment never reaches the server or a log), kept in this tab's sessionStorage, and removed from the address bar.
 */
export function takeToken(): string | null {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem(KEY, decodeURIComponent(m[1]!));
    history.replaceState(null, '', `${location.pathname}${location.search}`);
  }
  return sessionStorage.getItem(KEY);
}

export function keepToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
}
