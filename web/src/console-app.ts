import { A3sClient, HttpTransport, UnauthorizedError } from '../../src/client/index.js';
import type { ConsoleContext, ConsoleView } from './console-context.js';
import { el, replaceChildren } from './el.js';
import { errorText } from './format.js';
import { SessionView } from './session-view.js';
import { SessionsView } from './sessions-view.js';
import { signInView } from './sign-in-view.js';
import type { TokenStore } from './token-store.js';

/** A hash route of the console. */
export type Route = { view: 'sessions' } | { view: 'session'; id: string };

/** Parse `#/sessions` and `#/sessions/<id>` (anything else is the sessions list). */
export function parseRoute(hash: string): Route {
  const match = /^#\/sessions\/([^/]+)\/?$/.exec(hash);
  if (match) {
    try {
      return { view: 'session', id: decodeURIComponent(match[1]) };
    } catch {
      return { view: 'sessions' };
    }
  }
  return { view: 'sessions' };
}

/**
 * The console: signs in (a token kept in sessionStorage, or anonymous on a loopback server), then shows
 * the hash-routed views; any 401 returns to the sign-in form with a message.
 */
export class ConsoleApp {
  private view: ConsoleView | undefined;
  private ctx: ConsoleContext | undefined;
  private readonly main: HTMLElement;
  private readonly nav: HTMLElement;
  private readonly toast: HTMLElement;
  private toastTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    root: HTMLElement,
    private readonly tokens: TokenStore,
    private readonly baseUrl: string,
  ) {
    this.nav = el('nav', { class: 'topnav', 'aria-label': 'Console' });
    this.main = el('main', { id: 'content', class: 'content', tabindex: '-1' });
    this.toast = el('div', { class: 'toast', role: 'status', 'aria-live': 'polite' });
    replaceChildren(
      root,
      el(
        'header',
        { class: 'topbar' },
        el(
          'a',
          { class: 'brand', href: '#/sessions' },
          el('span', { class: 'brand-mark', 'aria-hidden': 'true' }, 'A3S'),
          ' Code console',
        ),
        this.nav,
      ),
      this.main,
      this.toast,
    );
    window.addEventListener('hashchange', () => this.route());
  }

  /** Sign in with the stored token (or anonymously), then show the route. */
  async start(): Promise<void> {
    const token = this.tokens.get();
    const outcome = await this.probe(token);
    if (outcome === 'ok') {
      this.signedIn(token);
      return;
    }
    if (outcome === 'unauthorized') {
      if (token !== undefined) this.tokens.clear();
      this.showSignIn(token !== undefined ? 'The stored token was refused (401). Sign in again.' : undefined, false);
      return;
    }
    replaceChildren(
      this.main,
      el(
        'div',
        { class: 'panel' },
        el('h1', {}, 'The server could not be reached'),
        el('p', { class: 'notice notice-error', role: 'alert' }, outcome),
        el('button', { type: 'button', class: 'btn', onclick: () => void this.start() }, 'Try again'),
      ),
    );
  }

  /** 'ok', 'unauthorized', or the failure's text. */
  private async probe(token: string | undefined): Promise<string> {
    try {
      await new A3sClient({ baseUrl: this.baseUrl, ...(token !== undefined ? { token } : {}) }).sessionInfos();
      return 'ok';
    } catch (error) {
      return error instanceof UnauthorizedError ? 'unauthorized' : errorText(error);
    }
  }

  private showSignIn(message: string | undefined, anonymousAllowed: boolean): void {
    this.view?.dispose();
    this.view = undefined;
    this.ctx = undefined;
    replaceChildren(this.nav);
    replaceChildren(
      this.main,
      signInView({
        message,
        anonymousAllowed,
        anonymous: () => this.signedIn(undefined),
        submit: async (token) => {
          const outcome = await this.probe(token);
          if (outcome === 'ok') {
            this.tokens.set(token);
            this.signedIn(token);
            return undefined;
          }
          return outcome === 'unauthorized' ? 'That token was not accepted (401). Check it and try again.' : outcome;
        },
      }),
    );
  }

  private signedIn(token: string | undefined): void {
    const options = { baseUrl: this.baseUrl, ...(token !== undefined ? { token } : {}) };
    this.ctx = {
      client: new A3sClient(options),
      http: new HttpTransport(options),
      navigate: (hash) => {
        if (location.hash === hash) this.route();
        else location.hash = hash;
      },
      unauthorized: (error) => {
        if (!(error instanceof UnauthorizedError)) return false;
        this.tokens.clear();
        this.showSignIn('The server refused the token (401): it may have been revoked. Sign in again.', false);
        return true;
      },
      announce: (text, kind = 'info') => this.announce(text, kind),
    };
    replaceChildren(
      this.nav,
      el('a', { href: '#/sessions' }, 'Sessions'),
      el('span', { class: 'who muted' }, token !== undefined ? 'Signed in with a token' : 'Anonymous (loopback)'),
      el('button', { type: 'button', class: 'btn btn-small', onclick: () => this.signOut() }, 'Sign out'),
    );
    this.route();
  }

  private signOut(): void {
    this.tokens.clear();
    void this.probe(undefined).then((outcome) => this.showSignIn('Signed out.', outcome === 'ok'));
  }

  private route(): void {
    if (!this.ctx) return;
    this.view?.dispose();
    const route = parseRoute(location.hash);
    const view: ConsoleView =
      route.view === 'session' ? new SessionView(this.ctx, route.id) : new SessionsView(this.ctx);
    this.view = view;
    replaceChildren(this.main, view.element);
    document.title = route.view === 'session' ? `${route.id} · A3S Code console` : 'Sessions · A3S Code console';
    void view.start().catch((error: unknown) => {
      if (!this.ctx?.unauthorized(error)) this.announce(errorText(error), 'error');
    });
  }

  private announce(text: string, kind: 'info' | 'error'): void {
    this.toast.textContent = text;
    this.toast.className = `toast toast-${kind} is-shown`;
    clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(() => this.toast.classList.remove('is-shown'), 4000);
  }
}
