import { verifyEvents } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { AguiEventMapper } from '../../src/interop/agui/agui-event-mapper.js';
import type { KnownEvent } from '../../src/protocol/agent-event-envelope.js';
import type { EventType } from '../../src/protocol/event-catalog.js';
import type { RuntimeEventPayloads } from '../../src/protocol/event-registry.js';
import type { ExecutionPlan, PlanTask } from '../../src/protocol/planning.js';
import type { PendingConfirmation } from '../../src/runtime/policy/confirmation-broker.js';

const RUN = 'run_1';
let seq = 0;
function ev<T extends EventType>(
  type: T,
  payload: RuntimeEventPayloads[T],
  runId: string | undefined = RUN,
): KnownEvent<T> {
  seq += 1;
  return {
    version: 1,
    type,
    payload,
    metadata: {
      ...(runId ? { run_id: runId } : {}),
      session_id: 's1',
      session_sequence: seq,
      timestamp_ms: 1000 + seq,
    },
  } as KnownEvent<T>;
}

const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
const noVerification = {
  status: 'skipped',
  report_count: 0,
  required_check_count: 0,
  pending_required_check_count: 0,
  failed_check_count: 0,
  residual_risk_count: 0,
} as const;

/** A complete agent_end payload (the registry's shape) with what a test sets. */
function agentEnd(
  fields: Pick<RuntimeEventPayloads['agent_end'], 'text' | 'status'> & Partial<RuntimeEventPayloads['agent_end']>,
): RuntimeEventPayloads['agent_end'] {
  return {
    usage,
    verification_summary: noVerification,
    tool_calls_count: 0,
    verification_status: 'skipped',
    pending_verification_count: 0,
    failed_verification_count: 0,
    verification_report_count: 0,
    verification_summary_text: null,
    ...fields,
  };
}

function mapperWith(pending: PendingConfirmation[] = []) {
  return new AguiEventMapper(
    { threadId: 's1', runId: 'client-1', a3sRunId: RUN },
    { pendingOfRun: () => pending, now: () => 5000 },
  );
}

const verified = (events: BaseEvent[]) => lastValueFrom(from(events).pipe(verifyEvents(false), toArray()));

describe('AguiEventMapper (planning steps, state, seeding)', () => {
  it('maps planning steps to STEP_STARTED/FINISHED and the plan and tasks to STATE_SNAPSHOT, in an order the client accepts', async () => {
    const mapper = mapperWith();
    const out = [...mapper.start()];
    const step: Omit<PlanTask, 'status'> = { id: 'p1', content: 'look', priority: 'medium', dependencies: [] };
    const plan: ExecutionPlan = {
      goal: 'g',
      steps: [{ ...step, status: 'pending' }],
      complexity: 'Simple',
      required_tools: [],
      estimated_steps: 1,
    };
    for (const e of [
      ev('planning_start', { prompt: 'x' }),
      ev('planning_end', { plan, estimated_steps: 1 }),
      ev('step_start', { step_id: 'p1', description: 'look', step_number: 1, total_steps: 1 }),
      ev('turn_start', { turn: 1 }),
      ev('text_delta', { text: 'looking' }),
      ev('text_delta', { text: 'x' }, 'other_run'),
      ev('turn_end', { turn: 1, usage }),
      ev('task_updated', { session_id: 's1', tasks: [{ ...step, status: 'completed' }] }),
      ev('step_end', { step_id: 'p1', status: 'completed', step_number: 1, total_steps: 1 }),
      ev('agent_end', agentEnd({ text: 'looking', status: 'completed' })),
    ])
      out.push(...mapper.map(e));
    expect(out.map((e) => e.type)).toEqual([
      'RUN_STARTED',
      'STATE_SNAPSHOT',
      'STEP_STARTED',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'STATE_SNAPSHOT',
      'STEP_FINISHED',
      'RUN_FINISHED',
    ]);
    expect(out[1]).toMatchObject({ snapshot: { plan } });
    expect(out[2]).toMatchObject({ stepName: '1. look' });
    expect(out[6]).toMatchObject({ snapshot: { plan, tasks: [{ id: 'p1', status: 'completed' }] } });
    expect(out.every((e) => e.metadata?.runId === 'client-1' && e.metadata?.a3sRunId === RUN)).toBe(true);
    expect(mapper.finished).toBe(true);
    await verified(out);
  });

  it("a run's change set is announced as state (changes: run id, files, patch size and digest)", async () => {
    const mapper = mapperWith();
    const out = [...mapper.start()];
    for (const e of [
      ev('turn_start', { turn: 1 }),
      ev('turn_end', { turn: 1, usage }),
      ev('run_changes_captured', { run_id: RUN, files: 2, patch_bytes: 120, patch_digest: 'sha256:ab' }),
      ev('agent_end', agentEnd({ text: '', status: 'completed' })),
    ])
      out.push(...mapper.map(e));
    expect(out.map((e) => e.type)).toEqual(['RUN_STARTED', 'STATE_SNAPSHOT', 'RUN_FINISHED']);
    expect(out[1]).toMatchObject({
      snapshot: { changes: { runId: RUN, files: 2, patchBytes: 120, patchDigest: 'sha256:ab' } },
    });
    await verified(out);
  });

  it('an interrupt inside a step closes it; a resumed mapper seeded with the run reopens it and sends only what follows', async () => {
    const pending: PendingConfirmation[] = [
      {
        toolId: 'c1',
        toolName: 'bash',
        args: { command: 'ls' },
        argsDigest: 'd',
        runId: RUN,
        createdAtMs: 0,
        timeoutMs: 1000,
        remainingMs: 900,
      } as PendingConfirmation,
    ];
    const before = [
      ev('step_start', { step_id: 'p1', description: 'run', step_number: 1, total_steps: 1 }),
      ev('turn_start', { turn: 1 }),
      ev('tool_start', { id: 'c1', name: 'bash' }),
      ev('tool_input_delta', { id: 'c1', delta: '{"command":"ls"}' }),
      ev('confirmation_required', { tool_id: 'c1', tool_name: 'bash', args: { command: 'ls' }, timeout_ms: 1000 }),
    ];
    const first = mapperWith(pending);
    const out1 = [...first.start(), ...before.flatMap((e) => first.map(e))];
    expect(out1.map((e) => e.type)).toEqual([
      'RUN_STARTED',
      'STEP_STARTED',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'STEP_FINISHED',
      'RUN_FINISHED',
    ]);
    expect(out1.at(-1)).toMatchObject({
      outcome: {
        type: 'interrupt',
        interrupts: [{ id: 'c1', reason: 'tool_call', toolCallId: 'c1', expiresAt: new Date(5900).toISOString() }],
      },
    });
    await verified(out1);

    pending.length = 0;
    const resumed = mapperWith(pending);
    for (const e of before) resumed.seed(e);
    const out2 = [...resumed.start()];
    for (const e of [
      ev('confirmation_received', { tool_id: 'c1', approved: true, reason: null }),
      ev('tool_execution_start', { id: 'c1', name: 'bash', args: { command: 'ls' } }),
      ev('tool_end', { id: 'c1', name: 'bash', output: 'a.txt', exit_code: 0, duration_ms: 1, truncated: false }),
      ev('step_end', { step_id: 'p1', status: 'completed', step_number: 1, total_steps: 1 }),
      ev(
        'agent_end',
        agentEnd({ text: '', status: 'failed', error: { code: 'MAX_TOOL_ROUNDS', message: 'too many' } }),
      ),
    ])
      out2.push(...resumed.map(e));
    expect(out2.map((e) => e.type)).toEqual([
      'RUN_STARTED',
      'STEP_STARTED',
      'TOOL_CALL_RESULT',
      'STEP_FINISHED',
      'RUN_ERROR',
    ]);
    expect(out2.at(-1)).toMatchObject({ code: 'MAX_TOOL_ROUNDS', message: 'too many' });
    await verified(out2);
  });

  it('a closed session ends the stream with RUN_ERROR', () => {
    const mapper = mapperWith();
    mapper.start();
    expect(mapper.map(ev('session_closed', { reason: 'closed' }, undefined))).toEqual([
      expect.objectContaining({ type: 'RUN_ERROR', code: 'SESSION_CLOSED' }),
    ]);
    expect(mapper.map(ev('text_delta', { text: 'late' }))).toEqual([]);
  });
});
