import { el } from './el.js';
import { errorText } from './format.js';

/** The session page when the session cannot be opened: not found, closed (with a Resume button), or the error. */
export function sessionUnavailable(sessionId: string, error: unknown, resume: () => void): (HTMLElement | null)[] {
  const code = (error as { code?: string }).code;
  const notFound = code === 'SESSION_NOT_FOUND';
  const button = el('button', { type: 'button', class: 'btn btn-primary', onclick: () => resume() }, 'Resume it');
  return [
    el('p', { class: 'crumbs' }, el('a', { href: '#/sessions' }, '← Sessions')),
    el(
      'h1',
      {},
      notFound ? 'Session not found' : code === 'SESSION_CLOSED' ? 'Session closed' : 'Could not open the session',
    ),
    el(
      'p',
      { class: 'notice notice-error', role: 'alert' },
      notFound
        ? `No session "${sessionId}" is open for you. It may be stored (resume it by id from the sessions page) or belong to someone else.`
        : errorText(error),
    ),
    code === 'SESSION_CLOSED' ? button : null,
  ];
}
