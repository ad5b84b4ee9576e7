import type { AgentEvent } from '../../src/client/index.js';
import { formatDuration } from './format.js';

/** A notice line of a run block: its kind (the colour), its text and what its Details fold shows. */
export interface RunNotice {
  kind: 'info' | 'warn' | 'error' | 'ok';
  text: string;
  detail?: unknown;
}

function line(kind: RunNotice['kind'], text: string, detail?: unknown): RunNotice {
  return detail !== undefined ? { kind, text, detail } : { kind, text };
}

/** The notice line of an event a run block shows as one line and nothing else, undefined for any other event. */
export function runNotice(event: AgentEvent): RunNotice | undefined {
  switch (event.type) {
    case 'confirmation_timeout':
      return line(
        'warn',
        `No answer in time for ${event.payload.tool_name || event.payload.tool_id}: ${event.payload.action_taken.replace('_', ' ')}`,
      );
    case 'hook_blocked':
      return line(
        'error',
        `Blocked by hook ${event.payload.hook_id ?? ''}: ${event.payload.tool_name} — ${event.payload.reason}`,
      );
    case 'external_task_pending':
      return line('info', `External task ${event.payload.task_id} (${event.payload.command_type}) waits for the host`);
    case 'external_task_completed':
      return line(
        event.payload.success ? 'ok' : 'error',
        `External task ${event.payload.task_id} ${event.payload.success ? 'completed' : 'failed'}`,
      );
    case 'planning_start':
      return line('info', 'Planning…');
    case 'goal_extracted':
      return line('info', `Goal: ${event.payload.goal.description}`);
    case 'goal_progress': {
      const p = event.payload;
      return line(
        'info',
        `Goal progress ${Math.round(p.progress * 100)}% (${p.completed_steps}/${p.total_steps} steps)`,
      );
    }
    case 'goal_achieved':
      return line('ok', `Goal achieved: ${event.payload.goal} in ${formatDuration(event.payload.duration_ms)}`);
    case 'context_compacted': {
      const p = event.payload;
      return line(
        'info',
        `Context compacted: ${p.before_messages} → ${p.after_messages} messages (was ${Math.round(p.percent_before)}% full)`,
        p.summary,
      );
    }
    case 'budget_threshold_hit':
    case 'budget_exhausted': {
      const p = event.payload;
      const what = `${p.resource} ${p.consumed} of ${p.limit === null ? '?' : p.limit}${p.message ? ` — ${p.message}` : ''}`;
      if (event.type === 'budget_exhausted') return line('error', `Budget exhausted: ${what}`);
      return line('warn', `Budget ${p.kind} threshold: ${what}`);
    }
    case 'run_warning':
      return line(
        'warn',
        `Warning (${event.payload.source}): ${event.payload.message}${event.payload.fallback ? ` — ${event.payload.fallback}` : ''}`,
      );
    case 'provider_retry':
      return line(
        'warn',
        `Provider retry ${event.payload.attempt}/${event.payload.threshold}: ${event.payload.message}`,
      );
    case 'continuation_injected':
      return line('info', `The model looked unfinished: continuation ${event.payload.continuation} injected`);
    case 'run_resumed':
      return line('info', `Resumed from run ${event.payload.from_run_id} at turn ${event.payload.turn}`);
    case 'command_dead_lettered':
    case 'persistence_failed':
      return line('error', `${event.type.replace(/_/g, ' ')}: ${event.payload.error}`, event.payload);
    case 'queue_alert':
      return line('error', `queue alert: ${event.payload.message}`, event.payload);
    case 'verification_started':
      return line('info', `Verifying ${event.payload.subject} (${event.payload.commands} command(s))…`);
    case 'run_changes_captured':
      return line('info', `Changes captured: ${event.payload.files} file(s), patch ${event.payload.patch_bytes} bytes`);
    case 'error':
      return line('error', `Error ${event.payload.code}: ${event.payload.message}`);
    default:
      return undefined;
  }
}
