import { EventType, type Event as AguiEvent, type TokenUsage } from '@ag-ui/core';
import type { AgentEventEnvelope, KnownEvent } from '../../protocol/agent-event-envelope.js';
import type { PendingQuestionView } from '../../protocol/questions.js';
import type { PendingConfirmation } from '../../runtime/policy/confirmation-broker.js';
import { aguiInterrupts, aguiTokenUsage } from './agui-interrupts.js';
import { aguiStateChange } from './agui-state-change.js';

export { INTERRUPT_RESPONSE_SCHEMA } from './agui-interrupts.js';

/** The ids a stream speaks of: the AG-UI thread (our session), the client's run id and our run id. */
export interface AguiRunIds {
  threadId: string;
  /** The client's RunAgentInput.runId, echoed as metadata.runId in every event. */
  runId: string;
  /** Our run (the one the session kernel runs). */
  a3sRunId: string;
}

/** What the mapper asks the session while it maps: the confirmations and questions still waiting for an answer. */
export interface AguiConfirmationView {
  /** Pending confirmations of the run (with their remaining time), for the interrupt outcome. */
  pendingOfRun(): PendingConfirmation[];
  /** Pending questions of the run (ask_user), for the interrupt outcome; none when absent. */
  questionsOfRun?(): PendingQuestionView[];
  /** The server clock (ms), for interrupts' expiresAt. */
  now(): number;
}

/**
 * Maps one run's events (the protocol's AgentEventEnvelope union) onto AG-UI events, keeping the open/close pairing AG-UI's
 * verifier demands: text and reasoning messages close before a tool call or at the turn's end, tool calls
 * close when their arguments are complete (turn end, confirmation or execution), and everything open is
 * closed before RUN_FINISHED. A pending confirmation or question ends the stream with an interrupt outcome; the run's
 * agent_end ends it with success, cancelled or RUN_ERROR. Events of other runs are ignored.
 */
export class AguiEventMapper {
  /** Set once the stream's terminal event (RUN_FINISHED or RUN_ERROR) was produced. */
  finished = false;
  private text: string | undefined;
  private reasoning: string | undefined;
  private segment = 0;
  private turnId: string;
  private turnTextId: string | undefined;
  private readonly openTools = new Set<string>();
  private readonly argsSeen = new Set<string>();
  /** Tool calls announced with TOOL_CALL_START whose result has not been sent. */
  private readonly awaitingResult = new Set<string>();
  /** Open steps: step_id -> stepName. */
  private readonly steps = new Map<string, string>();
  private readonly state: Record<string, unknown> = {};
  private out: AguiEvent[] = [];
  private sequence: number | undefined;
  private timestamp: number | undefined;

  constructor(
    private readonly ids: AguiRunIds,
    private readonly confirmations: AguiConfirmationView,
  ) {
    this.turnId = `${ids.a3sRunId}.t0`;
  }

  /** RUN_STARTED (our run id in its metadata), then what a seeded mapper must announce again: open steps, state. */
  start(extra: Record<string, unknown> = {}): AguiEvent[] {
    this.out = [];
    this.sequence = undefined;
    this.timestamp = this.confirmations.now();
    this.push(
      { type: EventType.RUN_STARTED, threadId: this.ids.threadId, runId: this.ids.runId, protocolVersion: '1.0' },
      extra,
    );
    for (const name of this.steps.values()) this.push({ type: EventType.STEP_STARTED, stepName: name });
    if (Object.keys(this.state).length > 0) this.push({ type: EventType.STATE_SNAPSHOT, snapshot: { ...this.state } });
    return this.take();
  }

  /**
   * Take in an event the client already saw on an earlier stream (the run's events up to the interrupt it
   * resumes), to learn the open steps, tool calls and state without emitting anything.
   */
  seed(event: AgentEventEnvelope): void {
    if (event.metadata.run_id !== this.ids.a3sRunId) return;
    if (event.type === 'confirmation_required' || event.type === 'user_question') {
      // The earlier stream closed what was open here and ended with the interrupt.
      this.closeText();
      this.closeReasoning();
      this.closeTools();
    } else if (event.type !== 'agent_end') this.translate(event);
    this.out = [];
  }

  /** The AG-UI events for one of our events (none for most). */
  map(event: AgentEventEnvelope): AguiEvent[] {
    if (this.finished) return [];
    this.out = [];
    this.sequence = event.metadata.session_sequence;
    this.timestamp = event.metadata.timestamp_ms;
    if (event.type === 'session_closed') {
      this.fail(`the session was closed (${event.payload.reason}) before the run ended`, 'SESSION_CLOSED');
      return this.take();
    }
    if (event.metadata.run_id !== this.ids.a3sRunId) return [];
    this.translate(event);
    return this.take();
  }

  /** RUN_ERROR now (the stream cannot go on); nothing after it. */
  error(message: string, code: string): AguiEvent[] {
    if (this.finished) return [];
    this.out = [];
    this.sequence = undefined;
    this.timestamp = this.confirmations.now();
    this.fail(message, code);
    return this.take();
  }

  /** The terminal events for a run that ended without this mapper seeing its agent_end (retention dropped it). */
  ended(
    status: 'completed' | 'failed' | 'cancelled',
    text: string,
    error: { code: string; message: string } | undefined,
  ): AguiEvent[] {
    if (this.finished) return [];
    this.out = [];
    this.sequence = undefined;
    this.timestamp = this.confirmations.now();
    this.end(status, { text }, error, undefined);
    return this.take();
  }

  private translate(event: AgentEventEnvelope): void {
    switch (event.type) {
      case 'turn_start':
        this.closeText();
        this.closeReasoning();
        this.turnId = `${this.ids.a3sRunId}.t${event.payload.turn}`;
        this.turnTextId = undefined;
        this.segment = 0;
        return;
      case 'text_delta':
        this.onText(event.payload.text);
        return;
      case 'reasoning_delta':
        this.onReasoning(event.payload.text);
        return;
      case 'tool_start':
        this.onToolStart(event.payload.id, event.payload.name);
        return;
      case 'tool_input_delta':
        if (!this.openTools.has(event.payload.id)) return;
        this.argsSeen.add(event.payload.id);
        this.push({ type: EventType.TOOL_CALL_ARGS, toolCallId: event.payload.id, delta: event.payload.delta });
        return;
      case 'tool_execution_start':
        this.closeTool(event.payload.id, event.payload.args);
        return;
      case 'tool_end':
        this.onToolEnd(event.payload.id, event.payload.output, event.payload.exit_code);
        return;
      case 'turn_end':
        this.closeText();
        this.closeReasoning();
        this.closeTools();
        return;
      case 'confirmation_required':
        this.onWaiting((p) => p.confirmations.some((c) => c.toolId === event.payload.tool_id));
        return;
      case 'user_question':
        this.onWaiting((p) => p.questions.some((q) => q.questionId === event.payload.question_id));
        return;
      case 'step_start':
        this.onStepStart(event.payload.step_id, `${event.payload.step_number}. ${event.payload.description}`);
        return;
      case 'step_end':
        this.onStepEnd(event.payload.step_id);
        return;
      case 'error':
        // A run lost with its node ends here; any other failure is reported by agent_end.
        if (event.payload.code === 'NODE_LOST') this.fail(event.payload.message, 'NODE_LOST');
        return;
      case 'agent_end':
        this.onAgentEnd(event.payload);
        return;
      default: {
        // Plan, tasks, goal and change-set events become state snapshots (agui-state-change.ts).
        const change = aguiStateChange(event);
        if (change !== undefined) this.snapshot(change);
        return;
      }
    }
  }

  private onText(delta: string): void {
    if (delta === '' && this.text === undefined) return;
    this.closeReasoning();
    if (this.text === undefined) {
      this.text = `${this.turnId}.m${this.segment}`;
      this.segment += 1;
      this.turnTextId ??= this.text;
      this.push({ type: EventType.TEXT_MESSAGE_START, messageId: this.text, role: 'assistant' });
    }
    this.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: this.text, delta });
  }

  private onReasoning(delta: string): void {
    if (delta === '' && this.reasoning === undefined) return;
    this.closeText();
    if (this.reasoning === undefined) {
      this.reasoning = `${this.turnId}.r${this.segment}`;
      this.segment += 1;
      this.push({ type: EventType.REASONING_START, messageId: this.reasoning });
      this.push({ type: EventType.REASONING_MESSAGE_START, messageId: this.reasoning, role: 'reasoning' });
    }
    this.push({ type: EventType.REASONING_MESSAGE_CONTENT, messageId: this.reasoning, delta });
  }

  private onToolStart(id: string, name: string): void {
    if (id === '' || this.openTools.has(id) || this.awaitingResult.has(id)) return;
    this.closeText();
    this.closeReasoning();
    this.openTools.add(id);
    this.awaitingResult.add(id);
    // Calls of one turn belong to that turn's assistant message (its text, when it had any).
    const parent = this.turnTextId ?? `${this.turnId}.calls`;
    this.push({ type: EventType.TOOL_CALL_START, toolCallId: id, toolCallName: name, parentMessageId: parent });
  }

  private closeTool(id: string, args?: unknown): void {
    if (!this.openTools.has(id)) return;
    if (!this.argsSeen.has(id) && args !== undefined)
      this.push({ type: EventType.TOOL_CALL_ARGS, toolCallId: id, delta: JSON.stringify(args) });
    this.openTools.delete(id);
    this.argsSeen.delete(id);
    this.push({ type: EventType.TOOL_CALL_END, toolCallId: id });
  }

  private closeTools(): void {
    for (const id of [...this.openTools]) this.closeTool(id);
  }

  private onToolEnd(id: string, output: string, exitCode: number): void {
    this.closeTool(id);
    if (!this.awaitingResult.delete(id)) return;
    this.push(
      { type: EventType.TOOL_CALL_RESULT, messageId: `${id}.result`, toolCallId: id, role: 'tool', content: output },
      { exitCode },
    );
  }

  private closeText(): void {
    if (this.text === undefined) return;
    this.push({ type: EventType.TEXT_MESSAGE_END, messageId: this.text });
    this.text = undefined;
  }

  private closeReasoning(): void {
    if (this.reasoning === undefined) return;
    this.push({ type: EventType.REASONING_MESSAGE_END, messageId: this.reasoning });
    this.push({ type: EventType.REASONING_END, messageId: this.reasoning });
    this.reasoning = undefined;
  }

  private closeSteps(): void {
    for (const name of this.steps.values()) this.push({ type: EventType.STEP_FINISHED, stepName: name });
    this.steps.clear();
  }

  private closeAll(): void {
    this.closeText();
    this.closeReasoning();
    this.closeTools();
    this.closeSteps();
  }

  private onStepStart(id: string, name: string): void {
    if (this.steps.has(id)) return;
    const taken = new Set(this.steps.values());
    this.steps.set(id, taken.has(name) ? `${name} (${id})` : name);
    this.push({ type: EventType.STEP_STARTED, stepName: this.steps.get(id) ?? name });
  }

  private onStepEnd(id: string): void {
    const name = this.steps.get(id);
    if (name === undefined) return;
    this.steps.delete(id);
    this.push({ type: EventType.STEP_FINISHED, stepName: name });
  }

  private snapshot(change: Record<string, unknown>): void {
    Object.assign(this.state, change);
    this.push({ type: EventType.STATE_SNAPSHOT, snapshot: { ...this.state } });
  }

  /** The interrupt outcome now when the run waits on a confirmation or question (connect); none otherwise. */
  waiting(): AguiEvent[] {
    if (this.finished) return [];
    this.out = [];
    this.sequence = undefined;
    this.timestamp = this.confirmations.now();
    this.onWaiting(() => true);
    return this.take();
  }

  /**
   * A confirmation or question still pending (`stillPending` of what is pending now) ends the stream with an
   * interrupt naming everything the run waits on; one already answered (a replay) does not.
   */
  private onWaiting(
    stillPending: (p: { confirmations: PendingConfirmation[]; questions: PendingQuestionView[] }) => boolean,
  ): void {
    const pending = {
      confirmations: this.confirmations.pendingOfRun(),
      questions: this.confirmations.questionsOfRun?.() ?? [],
    };
    if (pending.confirmations.length + pending.questions.length === 0 || !stillPending(pending)) return;
    this.closeAll();
    const interrupts = aguiInterrupts({
      ...pending,
      now: this.confirmations.now(),
      announced: (id) => this.awaitingResult.has(id),
    });
    this.push({
      type: EventType.RUN_FINISHED,
      threadId: this.ids.threadId,
      runId: this.ids.runId,
      outcome: { type: 'interrupt', interrupts },
    });
    this.finished = true;
  }

  private onAgentEnd(p: KnownEvent<'agent_end'>['payload']): void {
    this.end(
      p.status,
      { text: p.text, toolCallsCount: p.tool_calls_count, verificationStatus: p.verification_status },
      p.error ? { code: p.error.code || 'INTERNAL_ERROR', message: p.error.message } : undefined,
      aguiTokenUsage(p),
    );
  }

  private end(
    status: 'completed' | 'failed' | 'cancelled',
    result: Record<string, unknown>,
    error: { code: string; message: string } | undefined,
    usage: TokenUsage | undefined,
  ): void {
    if (status === 'failed') {
      this.fail(error?.message || 'the run failed', error?.code || 'INTERNAL_ERROR', usage);
      return;
    }
    this.closeAll();
    this.push({
      type: EventType.RUN_FINISHED,
      threadId: this.ids.threadId,
      runId: this.ids.runId,
      outcome: status === 'completed' ? { type: 'success' } : { type: 'cancelled' },
      ...(status === 'completed' ? { result } : {}),
      ...(usage ? { usage: [usage] } : {}),
    });
    this.finished = true;
  }

  private fail(message: string, code: string, usage?: TokenUsage): void {
    this.push({ type: EventType.RUN_ERROR, message, code, ...(usage ? { usage: [usage] } : {}) });
    this.finished = true;
  }

  /** Add an event with the stream's metadata (the client's run id, ours, our session_sequence) and time. */
  private push(event: AguiEvent, extra: Record<string, unknown> = {}): void {
    const metadata: Record<string, unknown> = { runId: this.ids.runId, a3sRunId: this.ids.a3sRunId, ...extra };
    if (this.sequence !== undefined) metadata.a3sSequence = this.sequence;
    this.out.push({
      ...event,
      ...(this.timestamp !== undefined ? { timestamp: this.timestamp } : {}),
      metadata,
    } as AguiEvent);
  }

  private take(): AguiEvent[] {
    const taken = this.out;
    this.out = [];
    return taken;
  }
}
