import type { PlanEntry, PlanEntryStatus, SessionUpdate } from '@agentclientprotocol/sdk';
import type { EventEnvelope } from '../../protocol/event-envelope.js';
import { acpToolKind } from './acp-tool-kind.js';

const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** Our plan step status as an ACP plan entry status (skipped and cancelled steps count as done). */
function entryStatus(status: unknown): PlanEntryStatus {
  if (status === 'in_progress') return 'in_progress';
  if (status === 'pending') return 'pending';
  return 'completed';
}

interface PlanStep {
  id: string;
  entry: PlanEntry;
}

/**
 * Maps one run's events onto ACP `session/update` payloads: text_delta -> agent_message_chunk, reasoning_delta
 * -> agent_thought_chunk, tool_start / tool_execution_start / tool_end -> tool_call and tool_call_update,
 * planning_end, step_start / step_end and task_updated -> plan (the whole plan each time, as ACP wants).
 * Stateful per run: it remembers which tool calls the editor has seen and the current plan.
 */
export class AcpRunUpdates {
  private readonly announced = new Set<string>();
  private plan: PlanStep[] = [];

  /** The updates one event becomes (none for events an editor has no view of). */
  map(event: EventEnvelope): SessionUpdate[] {
    const p = event.payload;
    switch (event.type) {
      case 'text_delta':
        return text(p.text) === '' ? [] : [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: text(p.text) } }];
      case 'reasoning_delta':
        return text(p.text) === '' ? [] : [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: text(p.text) } }];
      case 'tool_start':
        return this.announce(text(p.id), text(p.name), undefined);
      case 'tool_execution_start': {
        const id = text(p.id);
        if (!this.announced.has(id)) return this.announce(id, text(p.name), p.args, 'in_progress');
        return [{ sessionUpdate: 'tool_call_update', toolCallId: id, status: 'in_progress', rawInput: p.args }];
      }
      case 'tool_end': {
        const id = text(p.id);
        const failed = p.exit_code !== 0 || p.error_kind !== undefined;
        const update: SessionUpdate = {
          sessionUpdate: 'tool_call_update',
          toolCallId: id,
          status: failed ? 'failed' : 'completed',
          content: [{ type: 'content', content: { type: 'text', text: text(p.output) } }],
          rawOutput: { output: text(p.output), exit_code: p.exit_code, ...(p.error_kind !== undefined ? { error_kind: p.error_kind } : {}), truncated: p.truncated === true },
        };
        return [...(this.announced.has(id) ? [] : this.announce(id, text(p.name), undefined)), update];
      }
      case 'planning_end':
        return this.setPlan((p.plan as { steps?: unknown } | undefined)?.steps);
      case 'task_updated':
        return this.setPlan(p.tasks);
      case 'step_start':
        return this.markStep(text(p.step_id), 'in_progress');
      case 'step_end':
        return this.markStep(text(p.step_id), entryStatus(p.status));
      default:
        return [];
    }
  }

  private announce(id: string, name: string, args: unknown, status: 'pending' | 'in_progress' = 'pending'): SessionUpdate[] {
    if (id === '' || this.announced.has(id)) return [];
    this.announced.add(id);
    return [{ sessionUpdate: 'tool_call', toolCallId: id, title: name, name, kind: acpToolKind(name), status, ...(args !== undefined ? { rawInput: args } : {}) }];
  }

  private setPlan(steps: unknown): SessionUpdate[] {
    if (!Array.isArray(steps)) return [];
    this.plan = steps.map((step: Record<string, unknown>) => ({
      id: text(step.id),
      entry: { content: text(step.content), priority: step.priority === 'high' || step.priority === 'low' ? step.priority : 'medium', status: entryStatus(step.status) },
    }));
    return [this.planUpdate()];
  }

  private markStep(id: string, status: PlanEntryStatus): SessionUpdate[] {
    const step = this.plan.find((s) => s.id === id);
    if (!step) return [];
    step.entry = { ...step.entry, status };
    return [this.planUpdate()];
  }

  private planUpdate(): SessionUpdate {
    return { sessionUpdate: 'plan', entries: this.plan.map((s) => s.entry) };
  }
}
