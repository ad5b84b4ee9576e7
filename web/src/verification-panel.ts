import type { Session } from '../../src/client/index.js';
import type { ConsoleContext } from './console-context.js';
import { el, replaceChildren } from './el.js';
import { errorText } from './format.js';
import { verificationReportView } from './verification-rows.js';

/** How many of the newest reports the side panel shows. */
const SHOWN = 3;

/** The session's newest verification reports, as pass/fail rows (refreshed when a verification completes). */
export class VerificationPanel {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;

  constructor(
    private readonly ctx: ConsoleContext,
    private readonly session: Session,
  ) {
    this.body = el('div', { class: 'verification-list' });
    this.element = el(
      'section',
      { class: 'panel verifications', 'aria-labelledby': 'verifications-title', hidden: true },
      el('h2', { id: 'verifications-title' }, 'Verification'),
      this.body,
    );
  }

  /** Reload the reports. */
  async refresh(): Promise<void> {
    try {
      const reports = await this.session.verificationReports();
      replaceChildren(
        this.body,
        ...reports
          .slice(-SHOWN)
          .reverse()
          .map((report) => verificationReportView(report)),
      );
      this.element.hidden = reports.length === 0;
    } catch (error) {
      if (!this.ctx.unauthorized(error))
        replaceChildren(this.body, el('p', { class: 'notice notice-error' }, errorText(error)));
    }
  }
}
