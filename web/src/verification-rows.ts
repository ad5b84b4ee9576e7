import type { VerificationReport } from '../../src/protocol/verification.js';
import type { VerificationSummary } from '../../src/protocol/verification-summary.js';
import { el } from './el.js';
import { formatDuration } from './format.js';

const MARK: Record<string, string> = { passed: '✓', failed: '✗', needs_review: '!', skipped: '–' };

const OK = new Set(['passed', 'completed', 'done', 'delivered']);
const FAIL = new Set(['failed', 'rejected', 'denied']);
const WAIT = new Set(['needs_review', 'cancelled', 'awaiting approval', 'paused']);
const RUNNING = new Set([
  'busy',
  'running',
  'executing',
  'planning',
  'verifying',
  'created',
  'in progress',
  'in_progress',
  'active',
]);

/** A run, task or verification status as a coloured chip. */
export function statusChip(status: string): HTMLElement {
  const cls = OK.has(status)
    ? 'chip-ok'
    : FAIL.has(status)
      ? 'chip-fail'
      : WAIT.has(status)
        ? 'chip-waiting'
        : RUNNING.has(status)
          ? 'chip-running'
          : 'chip-neutral';
  return el('span', { class: `chip ${cls}` }, status.replace(/_/g, ' '));
}

/** A verification report as a table: one pass/fail row per check, failed output folded beneath. */
export function verificationReportView(report: VerificationReport): HTMLElement {
  const rows = report.checks.map((check) =>
    el(
      'tr',
      { class: `check check-${check.status}` },
      el(
        'td',
        {},
        el(
          'span',
          { class: `check-mark check-mark-${check.status}`, 'aria-hidden': 'true' },
          MARK[check.status] ?? '?',
        ),
        ' ',
        check.status.replace(/_/g, ' '),
      ),
      el(
        'td',
        {},
        el('code', {}, check.command || check.id),
        check.required ? '' : el('span', { class: 'muted' }, ' (optional)'),
      ),
      el('td', {}, check.exit_code === null ? '—' : `exit ${check.exit_code}${check.timed_out ? ' (timed out)' : ''}`),
      el('td', {}, formatDuration(check.duration_ms)),
    ),
  );
  const failures = report.checks
    .filter((check) => check.status !== 'passed' && check.output_tail.length > 0)
    .map((check) =>
      el(
        'details',
        { class: 'check-output' },
        el('summary', {}, `Output of ${check.id}`),
        el('pre', {}, check.output_tail),
      ),
    );
  return el(
    'div',
    { class: 'verification', 'data-report': report.id },
    el(
      'p',
      { class: 'verification-head' },
      'Verification ',
      el('strong', {}, report.subject),
      ' ',
      statusChip(report.status),
      ` ${report.summary.passed}/${report.summary.total} passed`,
    ),
    el(
      'table',
      { class: 'checks' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          el('th', { scope: 'col' }, 'Result'),
          el('th', { scope: 'col' }, 'Check'),
          el('th', { scope: 'col' }, 'Exit'),
          el('th', { scope: 'col' }, 'Time'),
        ),
      ),
      el('tbody', {}, ...rows),
    ),
    ...failures,
    ...(report.residual_risks ?? []).map((risk) => el('p', { class: 'risk' }, `Residual risk: ${risk}`)),
  );
}

/** The verification summary of a finished run (agent_end), as rows. */
export function verificationSummaryView(
  summary: VerificationSummary | undefined,
  text: string | null | undefined,
): HTMLElement | null {
  if (!summary || summary.report_count === 0) return null;
  const rows: HTMLElement[] = [];
  for (const subject of summary.failed_subjects ?? [])
    rows.push(
      el(
        'li',
        { class: 'check-failed' },
        el('span', { class: 'check-mark check-mark-failed', 'aria-hidden': 'true' }, '✗'),
        ` failed: ${subject}`,
      ),
    );
  for (const subject of summary.pending_subjects ?? [])
    rows.push(
      el(
        'li',
        { class: 'check-needs_review' },
        el('span', { class: 'check-mark check-mark-needs_review', 'aria-hidden': 'true' }, '!'),
        ` pending: ${subject}`,
      ),
    );
  return el(
    'div',
    { class: 'verification-summary' },
    el(
      'p',
      {},
      'Verification ',
      statusChip(summary.status),
      ` ${summary.report_count} report(s), ${summary.failed_check_count} failed check(s), ${summary.pending_required_check_count} pending`,
    ),
    rows.length > 0 ? el('ul', {}, ...rows) : null,
    text ? el('details', {}, el('summary', {}, 'Summary text'), el('pre', {}, text)) : null,
  );
}
