import type { SessionInfo, SessionOptionsInput } from '../../src/client/index.js';
import type { ConsoleContext, ConsoleView } from './console-context.js';
import { el, replaceChildren } from './el.js';
import { errorText, formatTime } from './format.js';
import { POLICY_PRESETS, presetById } from './policy-presets.js';
import { statusChip } from './verification-rows.js';

/** A labelled text input. */
function field(
  id: string,
  label: string,
  hint: string,
  props: Record<string, string> = {},
): { wrap: HTMLElement; input: HTMLInputElement } {
  const input = el('input', {
    id,
    name: id,
    type: 'text',
    autocomplete: 'off',
    'aria-describedby': `${id}-hint`,
    ...props,
  });
  return {
    input,
    wrap: el(
      'div',
      { class: 'field' },
      el('label', { for: id }, label),
      input,
      el('small', { id: `${id}-hint`, class: 'muted' }, hint),
    ),
  };
}

/** The tenant's sessions: the list (id, agent, model, busy, last run, labels), create, close and resume. */
export class SessionsView implements ConsoleView {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  private readonly listStatus: HTMLElement;
  private readonly createStatus: HTMLElement;
  private readonly resumeStatus: HTMLElement;

  constructor(private readonly ctx: ConsoleContext) {
    this.body = el('tbody', {});
    this.listStatus = el('p', { class: 'muted', role: 'status' }, 'Loading…');
    this.createStatus = el('p', { class: 'form-status', role: 'status' });
    this.resumeStatus = el('p', { class: 'form-status', role: 'status' });
    this.element = el(
      'div',
      { class: 'sessions-view' },
      el('h1', {}, 'Sessions'),
      el(
        'section',
        { class: 'panel', 'aria-labelledby': 'list-title' },
        el(
          'div',
          { class: 'panel-head' },
          el('h2', { id: 'list-title' }, 'Open sessions'),
          el('button', { type: 'button', class: 'btn btn-small', onclick: () => void this.load() }, 'Refresh'),
        ),
        el(
          'div',
          { class: 'table-wrap' },
          el(
            'table',
            { class: 'sessions-table' },
            el(
              'thead',
              {},
              el(
                'tr',
                {},
                ...['Session', 'Agent', 'Model', 'State', 'Last run', 'Labels', ''].map((h) =>
                  el('th', { scope: 'col' }, h),
                ),
              ),
            ),
            this.body,
          ),
        ),
        this.listStatus,
      ),
      el('div', { class: 'forms' }, this.createForm(), this.resumeForm()),
    );
  }

  /** Load the list. */
  async start(): Promise<void> {
    await this.load();
  }

  /** Nothing live to stop. */
  dispose(): void {}

  private async load(): Promise<void> {
    let sessions: SessionInfo[];
    try {
      sessions = await this.ctx.client.sessionInfos();
    } catch (error) {
      if (!this.ctx.unauthorized(error)) this.listStatus.textContent = errorText(error);
      return;
    }
    sessions.sort((a, b) => b.createdAtMs - a.createdAtMs);
    replaceChildren(this.body, ...sessions.map((info) => this.row(info)));
    this.listStatus.textContent =
      sessions.length === 0
        ? 'No open sessions. Create one below, or resume a stored one by id.'
        : `${sessions.length} open session(s).`;
  }

  private row(info: SessionInfo): HTMLElement {
    const last = info.lastRun;
    const labels = Object.entries(info.labels).filter(
      ([, value]) => value !== undefined && value !== null && value !== '',
    );
    const href = `#/sessions/${encodeURIComponent(info.id)}`;
    return el(
      'tr',
      { 'data-session-id': info.id },
      el(
        'td',
        {},
        el('a', { href }, el('code', {}, info.id)),
        el('br', {}),
        el('small', { class: 'muted' }, formatTime(info.createdAtMs)),
      ),
      el('td', {}, info.agent ?? 'default'),
      el('td', {}, info.model),
      el(
        'td',
        {},
        info.currentRun
          ? el('span', {}, statusChip('busy'), ' ', el('code', { title: info.currentRun.status }, info.currentRun.id))
          : statusChip('idle'),
      ),
      el(
        'td',
        {},
        last
          ? el(
              'span',
              {},
              statusChip(last.status),
              ' ',
              el('code', { class: 'muted' }, last.id.length > 14 ? `${last.id.slice(0, 12)}…` : last.id),
            )
          : el('span', { class: 'muted' }, 'none'),
      ),
      el('td', {}, ...labels.map(([key, value]) => el('span', { class: 'label' }, `${key}=${String(value)}`))),
      el(
        'td',
        { class: 'actions' },
        el('a', { class: 'btn btn-small', href }, 'Open'),
        el(
          'button',
          {
            type: 'button',
            class: 'btn btn-small btn-danger',
            'aria-label': `Close session ${info.id}`,
            onclick: () => void this.close(info.id),
          },
          'Close',
        ),
      ),
    );
  }

  private async close(id: string): Promise<void> {
    try {
      const closed = await this.ctx.client.closeSession(id);
      this.ctx.announce(closed ? `Closed session ${id}` : `Session ${id} was already closed`);
    } catch (error) {
      if (!this.ctx.unauthorized(error)) this.ctx.announce(errorText(error), 'error');
    }
    await this.load();
  }

  private createForm(): HTMLElement {
    const workspace = field(
      'new-workspace',
      'Workspace',
      'A directory inside the server’s workspace roots; empty: the server default.',
    );
    const model = field('new-model', 'Model', 'provider/model, e.g. openai/gpt-4.1; empty: the server default.');
    const agent = field('new-agent', 'Agent', 'A built-in or registered agent; empty: the ordinary agent.');
    const preset = el(
      'select',
      { id: 'new-policy', name: 'policy', 'aria-describedby': 'new-policy-hint' },
      ...POLICY_PRESETS.map((p) => el('option', { value: p.id }, p.label)),
    );
    const presetHint = el('small', { id: 'new-policy-hint', class: 'muted' }, POLICY_PRESETS[0].description);
    preset.addEventListener('change', () => (presetHint.textContent = presetById(preset.value).description));
    const form = el(
      'form',
      { class: 'panel form', 'aria-labelledby': 'create-title' },
      el('h2', { id: 'create-title' }, 'New session'),
      workspace.wrap,
      model.wrap,
      agent.wrap,
      el('div', { class: 'field' }, el('label', { for: 'new-policy' }, 'Policy'), preset, presetHint),
      el('button', { type: 'submit', class: 'btn btn-primary' }, 'Create session'),
      this.createStatus,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      // The console answers the agent's questions (a form in the run's activity): its sessions offer ask_user.
      const options: SessionOptionsInput = { askUser: true, ...presetById(preset.value).options };
      if (model.input.value.trim()) options.model = model.input.value.trim();
      void this.create(workspace.input.value.trim() || undefined, agent.input.value.trim() || undefined, options);
    });
    return form;
  }

  private async create(
    workspace: string | undefined,
    agent: string | undefined,
    options: SessionOptionsInput,
  ): Promise<void> {
    this.createStatus.textContent = 'Creating…';
    try {
      const session = agent
        ? await this.ctx.client.sessionForAgent(workspace, agent, options)
        : await this.ctx.client.session(workspace, options);
      this.createStatus.textContent = '';
      this.ctx.announce(`Created session ${session.sessionId}`);
      this.ctx.navigate(`#/sessions/${encodeURIComponent(session.sessionId)}`);
    } catch (error) {
      if (!this.ctx.unauthorized(error)) this.createStatus.textContent = errorText(error);
    }
  }

  private resumeForm(): HTMLElement {
    const id = field('resume-id', 'Session id', 'A stored session of yours (closed, or kept by the server’s store).', {
      required: '',
    });
    const form = el(
      'form',
      { class: 'panel form', 'aria-labelledby': 'resume-title' },
      el('h2', { id: 'resume-title' }, 'Resume a session'),
      id.wrap,
      el('button', { type: 'submit', class: 'btn' }, 'Resume'),
      this.resumeStatus,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.resume(id.input.value.trim());
    });
    return form;
  }

  private async resume(id: string): Promise<void> {
    if (!id) return;
    this.resumeStatus.textContent = 'Resuming…';
    try {
      const session = await this.ctx.client.resumeSession(id);
      this.resumeStatus.textContent = '';
      this.ctx.announce(
        session.resumed ? `Resumed session ${session.sessionId}` : `Opened session ${session.sessionId}`,
      );
      this.ctx.navigate(`#/sessions/${encodeURIComponent(session.sessionId)}`);
    } catch (error) {
      if (!this.ctx.unauthorized(error)) this.resumeStatus.textContent = errorText(error);
    }
  }
}
