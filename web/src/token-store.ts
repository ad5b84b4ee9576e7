const KEY = 'a3s.console.token';

/**
 * Where the console keeps the bearer token: this tab's sessionStorage only (gone when the tab closes,
 * never in a URL, a cookie or localStorage), so another site or a shared link never carries it.
 */
export class TokenStore {
  /** The stored token, undefined when none. */
  get(): string | undefined {
    try {
      return sessionStorage.getItem(KEY) ?? undefined;
    } catch {
      return undefined;
    }
  }

  /** Store a token for this tab. */
  set(token: string): void {
    sessionStorage.setItem(KEY, token);
  }

  /** Forget the token (sign out). */
  clear(): void {
    sessionStorage.removeItem(KEY);
  }
}
