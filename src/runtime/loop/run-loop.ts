import type { RunErrorCode } from '../../errors.js';
import type { AttachmentRef } from '../../protocol/attachments.js';
import type { ChatMessage, ToolCall } from '../../protocol/chat-message.js';
import type { PlanProgress } from '../../protocol/planning.js';
import { addUsage, type Usage } from '../../protocol/run-record.js';
import type { InvocationContext } from '../invocation/invocation-context.js';
import type { ToolInvoker } from '../invocation/tool-invoker.js';
import { deadlineReason } from '../invocation/run-deadline-error.js';
import { CONTINUATION_PROMPT } from '../prompt/system-prompt.js';
import { looksUnfinished } from './looks-unfinished.js';
import type { SafePointStop } from './safe-point-stop.js';
import { guardContext } from './context-guard.js';
import type { CompactionAttempt, ContextReading } from './context-reading.js';
import { withDeadline } from './run-deadline.js';
import { streamTurn, TurnError, type TurnDeps, type TurnMeta, type TurnResult } from './stream-turn.js';

/** Loop state after a completed tool round: what a checkpoint holds and what a resume starts from. */
export interface LoopState {
  turn: number;
  messages: ChatMessage[];
  usage: Usage;
  toolCallsCount: number;
  toolRounds: number;
  parseFailures: number;
  continuations: number;
  lastCallKey: string;
  sameCallCount: number;
}

/** Services the loop drives. */
export interface LoopDeps extends TurnDeps {
  tools: ToolInvoker;
  /**
   * Called after every completed tool round with the state a resume would start from, and for a planned run
   * the plan's progress (which step this loop is); also mid-round, before a call that asks the user (ask_user),
   * so a resume (after a restart or takeover) finishes that round from the asking call on.
   */
  checkpoint?(state: LoopState, plan?: PlanProgress): Promise<void>;
  /**
   * Called before every turn with the working transcript (system message first): when the context passed
   * the threshold, answers the compacted replacement (absent when the compaction did not happen) and the
   * usage of its summary call (counted in the run's); undefined when no compaction was due. Never throws for
   * a failed compaction.
   */
  compact?(
    messages: readonly ChatMessage[],
    reading: ContextReading,
    ctx: InvocationContext,
    force: boolean,
  ): Promise<CompactionAttempt | undefined>;
  /** Set (its reason) when the run should stop at its next safe point: the loop checks it before each turn. */
  safePoint?: SafePointStop;
}

/** Why a run ended other than normally. */
export interface LoopError {
  code: RunErrorCode;
  message: string;
  /** The provider's HTTP status, for PROVIDER_ERROR and CIRCUIT_BREAKER_OPEN when it answered one. */
  status?: number;
}

/** How a run ended: final text, counters (a resumed run's include the checkpoint's), and the messages it added after its starting transcript. */
export interface RunOutcome {
  status: 'completed' | 'failed' | 'cancelled';
  text: string;
  toolCallsCount: number;
  usage: Usage;
  added: ChatMessage[];
  error?: LoopError;
  /** What the last provider response said about itself (the seed's agent_end.meta). */
  meta?: TurnMeta;
}

/** What the loop returns: the run's outcome, its working transcript and the state a following plan step continues from. */
export interface LoopOutcome extends RunOutcome {
  /** The working transcript at the end (system message first; compacted when a compaction ran). */
  messages: ChatMessage[];
  /** The loop state at the end, from which a following plan step continues. */
  state: LoopState;
}

/**
 * The agent loop: stream a turn, run its tool calls through the tool invoker, feed results back, and
 * repeat until the model answers without tools, honouring every limit in the governance snapshot.
 * `maxExecutionTimeMs` is a hard deadline: it aborts the in-flight provider call or tool too.
 */
export async function runLoop(
  deps: LoopDeps,
  ctx: InvocationContext,
  transcript: ChatMessage[],
  resume?: LoopState,
): Promise<LoopOutcome> {
  const deadline = ctx.hostEnv.now() + ctx.governance.maxExecutionTimeMs;
  const scope = withDeadline(ctx, deadline);
  try {
    return await runLoopWithin(deps, scope.ctx, transcript, deadline, resume);
  } finally {
    scope.dispose();
  }
}

/**
 * The loop on a context that already carries the run's deadline (withDeadline): a planned run runs one
 * loop per step under one deadline. `resume` (a checkpoint's, or the previous step's state) replaces `transcript`.
 */
export function runLoopWithin(
  deps: LoopDeps,
  ctx: InvocationContext,
  transcript: ChatMessage[],
  deadline: number,
  resume?: LoopState,
): Promise<LoopOutcome> {
  return loop(deps, ctx, resume ? resume.messages : transcript, deadline, resume);
}

async function loop(
  deps: LoopDeps,
  ctx: InvocationContext,
  transcript: ChatMessage[],
  deadline: number,
  resume: LoopState | undefined,
): Promise<LoopOutcome> {
  const g = ctx.governance;
  let messages = [...transcript];
  // Provider-reported context size for the compaction check (none yet: everything is estimated).
  const reading: ContextReading = { reportedTokens: 0, reportedMessages: 0 };
  const added: ChatMessage[] = [];
  const usage: Usage = resume ? { ...resume.usage } : { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  let toolCallsCount = resume?.toolCallsCount ?? 0;
  let toolRounds = resume?.toolRounds ?? 0;
  let parseFailures = resume?.parseFailures ?? 0;
  let continuations = resume?.continuations ?? 0;
  let lastCallKey = resume?.lastCallKey ?? '';
  let sameCallCount = resume?.sameCallCount ?? 0;
  let text = '';
  // Text of the answer so far when the model was asked to continue it (finish_reason "length").
  let continuedText = '';
  let turn = resume?.turn ?? 0;
  let meta: TurnMeta | undefined;

  const push = (message: ChatMessage) => {
    messages.push(message);
    added.push(message);
  };
  // A call the loop answers without running it: the transcript stays valid and tool_start gets its tool_end.
  const skip = (call: ToolCall, output: string) => {
    ctx.emit('tool_end', {
      id: call.id,
      name: call.function.name,
      output,
      exit_code: 1,
      duration_ms: 0,
      truncated: false,
    });
    push({ role: 'tool', tool_call_id: call.id, content: output });
  };
  const state = (copy: boolean): LoopState => ({
    turn,
    messages: copy ? [...messages] : messages,
    usage: { ...usage },
    toolCallsCount,
    toolRounds,
    parseFailures,
    continuations,
    lastCallKey,
    sameCallCount,
  });
  const end = (status: LoopOutcome['status'], error?: LoopError): LoopOutcome => ({
    status,
    text,
    toolCallsCount,
    usage,
    added,
    messages,
    state: state(false),
    ...(error ? { error } : {}),
    ...(meta ? { meta } : {}),
  });
  const deadlineError = (): LoopError => ({
    code: 'MAX_EXECUTION_TIME',
    message: `the run exceeded maxExecutionTimeMs (${g.maxExecutionTimeMs} ms)`,
  });
  // The signal fires for a cancel (or session close) and for the deadline; the reason tells them apart.
  const stopped = () =>
    deadlineReason(ctx.signal)
      ? end('failed', deadlineError())
      : end('cancelled', { code: 'CANCELLED', message: 'the run was cancelled' });
  const notRunReason = () =>
    deadlineReason(ctx.signal) ? `Not run: ${deadlineError().message}.` : 'Not run: the run was cancelled.';

  // One round's calls, in order; a call that asks the user is preceded by a mid-round checkpoint. Answers the
  // outcome that ends the run (too many malformed calls), else undefined.
  const runRound = async (calls: readonly ToolCall[]): Promise<LoopOutcome | undefined> => {
    // Images the round's results return follow them in one user message (tool messages carry text only).
    const images: AttachmentRef[] = [];
    const showImages = (): void => {
      if (images.length > 0) push(toolImagesMessage(images));
    };
    for (const [index, call] of calls.entries()) {
      if (ctx.signal.aborted) {
        skip(call, notRunReason());
        continue;
      }
      if (deps.checkpoint && deps.tools.asksUser(call.function.name)) await deps.checkpoint(state(true));
      const key = `${call.function.name}\u0000${call.function.arguments}`;
      sameCallCount = key === lastCallKey ? sameCallCount + 1 : 1;
      lastCallKey = key;
      toolCallsCount += 1;
      if (sameCallCount > g.duplicateToolCallThreshold) {
        skip(
          call,
          `Not run: this exact ${call.function.name} call was repeated ${sameCallCount} times in a row (duplicateToolCallThreshold ${g.duplicateToolCallThreshold}). Try something different.`,
        );
        continue;
      }
      const outcome = await deps.tools.invoke(
        { id: call.id, name: call.function.name, args: call.function.arguments, origin: 'model' },
        ctx,
      );
      push({ role: 'tool', tool_call_id: call.id, content: outcome.output });
      if (outcome.images) images.push(...outcome.images);
      if (outcome.malformedArgs) {
        parseFailures += 1;
        if (parseFailures > g.maxParseRetries) {
          for (const rest of calls.slice(index + 1))
            skip(rest, 'Not run: the run stopped after too many malformed tool calls.');
          showImages();
          return end('failed', {
            code: 'MAX_PARSE_RETRIES',
            message: `the model sent malformed tool arguments more than maxParseRetries (${g.maxParseRetries}) times`,
          });
        }
      }
    }
    showImages();
    return undefined;
  };

  // A checkpoint taken mid-round (before a call that asks the user) resumes by finishing that round first.
  const unfinished = resume ? unansweredCalls(messages) : [];
  if (unfinished.length > 0) {
    const failed = await runRound(unfinished);
    if (failed) return failed;
    if (ctx.signal.aborted) return stopped();
    await deps.checkpoint?.(state(true));
  }

  for (;;) {
    if (ctx.signal.aborted) return stopped();
    if (ctx.hostEnv.now() > deadline) return end('failed', deadlineError());
    // The safe point (before a provider call): steers join the transcript here, an interrupt stops the run.
    const steered = deps.safePoint?.atSafePoint?.(turn + 1);
    if (steered) for (const message of steered) push(message);
    const stopAt = deps.safePoint?.reason;
    if (stopAt !== undefined) return end('cancelled', { code: 'CANCELLED', message: stopAt });

    // Compaction when due (or forced by the transcript bound), and no request past the bounds.
    const verdict = await guardContext(deps, ctx, messages, reading);
    if (verdict.usage) addUsage(usage, verdict.usage);
    if (verdict.messages) {
      messages = verdict.messages;
      reading.reportedTokens = 0;
      reading.reportedMessages = 0;
    }
    if (ctx.signal.aborted) return stopped();
    if (verdict.error) return end('failed', verdict.error);

    turn += 1;
    ctx.emit('turn_start', { turn });
    let result: TurnResult;
    try {
      result = await streamTurn(deps, ctx, messages, turn);
    } catch (error) {
      if (ctx.signal.aborted) return stopped();
      const message = error instanceof Error ? error.message : String(error);
      // streamTurn throws TurnError with the failure's code; anything else is a fault of ours.
      if (!(error instanceof TurnError)) return end('failed', { code: 'INTERNAL_ERROR', message });
      return end('failed', {
        code: error.code,
        message,
        ...(error.status !== undefined ? { status: error.status } : {}),
      });
    }
    if (result.meta) meta = result.meta;
    addUsage(usage, result.usage);
    ctx.emit('turn_end', {
      turn,
      usage: {
        prompt_tokens: result.usage.promptTokens,
        completion_tokens: result.usage.completionTokens,
        total_tokens: result.usage.totalTokens,
      },
      finish_reason: result.finishReason,
    });

    const assistant: ChatMessage = { role: 'assistant', content: result.text || null };
    if (result.reasoning) assistant.reasoning = result.reasoning;
    if (result.toolCalls.length > 0) assistant.tool_calls = result.toolCalls;
    push(assistant);
    if (result.usage.totalTokens > 0) {
      reading.reportedTokens = result.usage.totalTokens;
      reading.reportedMessages = messages.length;
    }
    if (result.text) text = continuedText + result.text;
    continuedText = '';

    if (result.toolCalls.length === 0) {
      const unfinished =
        g.continuationEnabled && continuations < g.maxContinuationTurns
          ? looksUnfinished({
              text: result.text,
              finishReason: result.finishReason,
              afterToolResults: afterToolResults(messages),
            })
          : undefined;
      if (unfinished !== undefined) {
        continuations += 1;
        // An answer cut for length goes on where it stopped; an announcement is replaced by what follows it.
        continuedText = unfinished === 'length' ? text : '';
        ctx.emit('continuation_injected', { turn, continuation: continuations, reason: unfinished });
        push({ role: 'user', content: CONTINUATION_PROMPT });
        continue;
      }
      return end('completed');
    }

    if (toolRounds >= g.maxToolRounds) {
      // The model asked for more tools than allowed: answer each call so the transcript stays valid.
      for (const call of result.toolCalls) skip(call, `Not run: the run reached maxToolRounds (${g.maxToolRounds}).`);
      return end('failed', { code: 'MAX_TOOL_ROUNDS', message: `the run reached maxToolRounds (${g.maxToolRounds})` });
    }
    toolRounds += 1;

    const failed = await runRound(result.toolCalls);
    if (failed) return failed;
    if (ctx.signal.aborted) return stopped();
    await deps.checkpoint?.(state(true));
  }
}

/** The calls of the transcript's last assistant message that no tool message answers yet (a mid-round checkpoint's). */
function unansweredCalls(messages: readonly ChatMessage[]): ToolCall[] {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (message?.role !== 'assistant') continue;
    const answered = new Set(messages.slice(i + 1).map((m) => (m.role === 'tool' ? m.tool_call_id : undefined)));
    return (message.tool_calls ?? []).filter((call) => !answered.has(call.id));
  }
  return [];
}

/** The user message that shows the model the images a round of tool results returned (by reference). */
export function toolImagesMessage(images: readonly AttachmentRef[]): ChatMessage {
  const names = images.map((ref) => `${ref.name ?? ref.attachmentId} (${ref.mediaType}, ${ref.bytes} bytes)`);
  return {
    role: 'user',
    content: `[${images.length === 1 ? 'the image' : 'the images'} the tool results above returned: ${names.join(', ')}]`,
    attachments: [...images],
  };
}

/** The answer just pushed follows tool results (directly, or after the user message of their images). */
function afterToolResults(messages: readonly ChatMessage[]): boolean {
  const before = messages.at(-2);
  if (before?.role === 'tool') return true;
  return before?.role === 'user' && before.attachments !== undefined && messages.at(-3)?.role === 'tool';
}
