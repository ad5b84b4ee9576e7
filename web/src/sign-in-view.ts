import { el } from './el.js';

/** Options of the sign-in form. */
export interface SignInOptions {
  /** Why the form shows (e.g. the token was refused), shown as an alert. */
  message?: string;
  /** True when the server answered without a token (anonymous on loopback): offer to continue without one. */
  anonymousAllowed: boolean;
  /** Try a token; resolves to an error message when it was refused, undefined when signed in. */
  submit(token: string): Promise<string | undefined>;
  /** Continue without a token. */
  anonymous(): void;
}

/** The sign-in form: a token typed once (kept in this tab's sessionStorage, sent as a header, never in a URL). */
export function signInView(options: SignInOptions): HTMLElement {
  const input = el('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
    spellcheck: 'false',
    'aria-describedby': 'token-hint',
  });
  const status = el('p', { class: 'form-status', role: 'alert' }, options.message ?? '');
  const submit = el('button', { type: 'submit', class: 'btn btn-primary' }, 'Sign in');
  const form = el(
    'form',
    { class: 'panel form sign-in', 'aria-labelledby': 'sign-in-title' },
    el('h1', { id: 'sign-in-title' }, 'Sign in'),
    el(
      'div',
      { class: 'field' },
      el('label', { for: 'token' }, 'API token'),
      input,
      el(
        'small',
        { id: 'token-hint', class: 'muted' },
        'A bearer token from the server’s api_tokens. It stays in this tab (sessionStorage) and is sent only to this server, in the Authorization header.',
      ),
    ),
    el(
      'div',
      { class: 'actions' },
      submit,
      options.anonymousAllowed
        ? el('button', { type: 'button', class: 'btn', onclick: () => options.anonymous() }, 'Continue without a token')
        : null,
    ),
    status,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const token = input.value.trim();
    if (!token) return;
    submit.disabled = true;
    status.textContent = 'Checking…';
    void options.submit(token).then((refused) => {
      submit.disabled = false;
      status.textContent = refused ?? '';
      if (refused) input.select();
    });
  });
  queueMicrotask(() => input.focus());
  return el('div', { class: 'sign-in-wrap' }, form);
}
