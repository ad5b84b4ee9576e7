import type { PlanEntry, PlanEntryStatus, SessionUpdate } from '@agentclientprotocol/sdk';
import type { AgentEventEnvelope } from '../../protocol/agent-event-envelope.js';
import type { PlanTask, TaskStatus } from '../../protocol/planning.js';
import { acpToolKind } from './acp-tool-kind.js';

/** Our plan step status as an ACP plan entry status (skipped and cancelled steps count as done). */
function entryStatus(status: TaskStatus): PlanEntryStatus {
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
  map(event: AgentEventEnvelope): SessionUpdate[] {
    switch (event.type) {
      case 'text_delta':
        return event.payload.text === ''
          ? []
          : [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: event.payload.text } }];
      case 'reasoning_delta':
        return event.payload.text === ''
          ? []
          : [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: event.payload.text } }];
      case 'tool_start':
        return this.announce(event.payload.id, event.payload.name, undefined);
      case 'tool_execution_start': {
        const { id, name, args } = event.payload;
        if (!this.announced.has(id)) return this.announce(id, name, args, 'in_progress');
        return [{ sessionUpdate: 'tool_call_update', toolCallId: id, status: 'in_progress', rawInput: args }];
      }
      case 'tool_end': {
        const p = event.payload;
        const failed = p.exit_code !== 0 || p.error_kind !== undefined;
        const update: SessionUpdate = {
          sessionUpdate: 'tool_call_update',
          toolCallId: p.id,
          status: failed ? 'failed' : 'completed',
          content: [{ type: 'content', content: { type: 'text', text: p.output } }],
          rawOutput: {
            output: p.output,
            exit_code: p.exit_code,
            ...(p.error_kind !== undefined ? { error_kind: p.error_kind } : {}),
            truncated: p.truncated,
          },
        };
        return [...(this.announced.has(p.id) ? [] : this.announce(p.id, p.name, undefined)), update];
      }
      case 'planning_end':
        return this.setPlan(event.payload.plan.steps);
      case 'task_updated':
        return this.setPlan(event.payload.tasks);
      case 'step_start':
        return this.markStep(event.payload.step_id, 'in_progress');
      case 'step_end':
        return this.markStep(event.payload.step_id, entryStatus(event.payload.status));
      default:
        return [];
    }
  }

  private announce(
    id: string,
    name: string,
    args: unknown,
    status: 'pending' | 'in_progress' = 'pending',
  ): SessionUpdate[] {
    if (id === '' || this.announced.has(id)) return [];
    this.announced.add(id);
    return [
      {
        sessionUpdate: 'tool_call',
        toolCallId: id,
        title: name,
        name,
        kind: acpToolKind(name),
        status,
        ...(args !== undefined ? { rawInput: args } : {}),
      },
    ];
  }

  private setPlan(steps: readonly PlanTask[]): SessionUpdate[] {
    this.plan = steps.map((step) => ({
      id: step.id,
      entry: { content: step.content, priority: step.priority, status: entryStatus(step.status) },
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
