import type { SessionInfo } from '../../src/client/index.js';
import { el, replaceChildren } from './el.js';
import { statusChip } from './verification-rows.js';

/** What the head's buttons do. */
export interface SessionHeadActions {
  refresh(): void;
  close(): void;
}

/** Where a fork came from: a link to the parent (of this tenant), the run it was cut before, the messages it kept. */
function forkOrigin(origin: NonNullable<SessionInfo['forkedFrom']>): Array<Node | string> {
  const parent = el('code', {}, origin.sessionId);
  return [
    origin.tenantId === undefined
      ? el('a', { class: 'fork-parent', href: `#/sessions/${encodeURIComponent(origin.sessionId)}` }, parent)
      : parent,
    origin.atRunId !== undefined ? ' before run ' : '',
    origin.atRunId !== undefined ? el('code', {}, origin.atRunId) : '',
    ` (${origin.atMessage} message${origin.atMessage === 1 ? '' : 's'})`,
  ];
}

/** The session page's head: its id, its facts (agent, model, workspace, tokens, labels) and its Refresh / Close buttons. */
export function sessionHead(info: SessionInfo, actions: SessionHeadActions): HTMLElement[] {
  const labels = Object.entries(info.labels).filter(
    ([, value]) => value !== undefined && value !== null && value !== '',
  );
  return [
    el('h1', {}, 'Session ', el('code', {}, info.id)),
    el(
      'dl',
      { class: 'facts' },
      el('dt', {}, 'Agent'),
      el('dd', {}, info.agent ?? 'default'),
      el('dt', {}, 'Model'),
      el('dd', {}, info.model),
      el('dt', {}, 'Workspace'),
      el('dd', {}, el('code', {}, info.workspace)),
      ...(info.forkedFrom ? [el('dt', {}, 'Fork of'), el('dd', {}, ...forkOrigin(info.forkedFrom))] : []),
      el('dt', {}, 'Tokens'),
      el('dd', {}, String(info.usage.totalTokens)),
      ...(labels.length > 0
        ? [
            el('dt', {}, 'Labels'),
            el('dd', {}, ...labels.map(([key, value]) => el('span', { class: 'label' }, `${key}=${String(value)}`))),
          ]
        : []),
    ),
    el(
      'div',
      { class: 'actions' },
      el('button', { type: 'button', class: 'btn', onclick: () => actions.refresh() }, 'Refresh'),
      el('button', { type: 'button', class: 'btn btn-danger', onclick: () => actions.close() }, 'Close session'),
    ),
  ];
}

/** Show in `busy` which run holds the session (a new prompt waits for it), or that it is idle. */
export function renderBusy(busy: HTMLElement, info: SessionInfo): void {
  if (info.currentRun)
    replaceChildren(
      busy,
      statusChip('busy'),
      ' Run ',
      el('code', {}, info.currentRun.id),
      ` holds this session (${info.currentRun.status}); a new prompt waits until it ends.`,
    );
  else replaceChildren(busy, statusChip('idle'), ' Idle: a prompt starts a run.');
  busy.classList.toggle('is-busy', info.currentRun !== null);
}
