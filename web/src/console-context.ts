import type { A3sClient, HttpTransport } from '../../src/client/index.js';

/** What every view of the console gets from the app: the signed-in client and the app's navigation and error handling. */
export interface ConsoleContext {
  readonly client: A3sClient;
  /** The same server and token for what the typed client has no method for (raw uploads, attachment bytes). */
  readonly http: HttpTransport;
  /** Go to a hash route (`#/sessions`, `#/sessions/<id>`). */
  navigate(hash: string): void;
  /** Handle a failure: a 401 returns to the sign-in form (answers true); anything else answers false. */
  unauthorized(error: unknown): boolean;
  /** Announce a short status message to everyone (visible toast, polite live region). */
  announce(text: string, kind?: 'info' | 'error'): void;
}

/** A view the app mounts into its main element and disposes when the route changes. */
export interface ConsoleView {
  readonly element: HTMLElement;
  /** Load data and start live work (streams, timers). */
  start(): Promise<void>;
  /** Stop live work. */
  dispose(): void;
}
