import { WorkspaceChangedError } from '../../workspace/workspace-errors.js';
import { WorkspaceFiles } from '../../workspace/workspace-files.js';
import { openGuardOf } from '../call-subjects.js';
import { workspaceChangedResult } from '../../tools/tool-file-helpers.js';
import type { NestedInvoker, ToolContext, ToolResult, UserQuestions } from '../../tools/define-tool.js';
import type { QuestionBroker } from '../../policy/question-broker.js';
import { deadlineReason } from '../run-deadline-error.js';
import type { ToolCallState } from '../tool-call-state.js';
import type { ExecutionBound } from '../../queue/lane-command.js';

/** The result of a call stopped by the run's signal: the deadline names its limit, anything else is a cancel. */
export function stoppedResult(toolName: string, signal: AbortSignal, when: string): ToolResult {
  const deadline = deadlineReason(signal);
  if (deadline)
    return {
      output: `Tool ${toolName} was stopped ${when}: ${deadline.message}.`,
      exitCode: 1,
      metadata: { timed_out: true, limit: 'maxExecutionTimeMs' },
      errorKind: { type: 'cancelled', op: toolName },
    };
  return {
    output: `Tool ${toolName} was cancelled ${when}.`,
    exitCode: 1,
    metadata: { cancelled: true },
    errorKind: { type: 'cancelled', op: toolName },
  };
}

/**
 * Stage 7: run the tool with a per-call AbortController linked to the run's signal and the
 * toolTimeoutMs timer. Timeout and cancel become error results; output streamed after the call ended
 * (a tool winding down) is dropped, live output is redacted like the result (in whole lines), and it
 * stops at the output cap. A lane `bound` (queueConfig.timeoutMs) shortens the timer when it is the smaller one.
 */
export async function execute(
  state: ToolCallState,
  nested: NestedInvoker | undefined,
  bound?: ExecutionBound,
): Promise<ToolResult> {
  const { ctx, call } = state;
  const tool = state.tool;
  if (!tool) return { output: `Unknown tool "${call.name}"`, exitCode: 1 };
  if (ctx.signal.aborted) return stoppedResult(tool.name, ctx.signal, 'before it started');

  // One controller per call; the run-signal listener is removed when the call ends, so a long run
  // does not accumulate a listener per call.
  const controller = new AbortController();
  let stop: (result: ToolResult) => void = () => undefined;
  const stopped = new Promise<ToolResult>((resolve) => {
    stop = resolve;
  });
  const onRunAbort = (): void => {
    controller.abort(ctx.signal.reason);
    stop(stoppedResult(tool.name, ctx.signal, 'while running'));
  };
  ctx.signal.addEventListener('abort', onRunAbort, { once: true });
  const laneBound = bound !== undefined && bound.ms < ctx.governance.toolTimeoutMs ? bound : undefined;
  const timeoutMs = laneBound?.ms ?? ctx.governance.toolTimeoutMs;
  const limit = laneBound?.source ?? 'toolTimeoutMs';
  const timer =
    tool.delegates || tool.asksUser
      ? undefined
      : setTimeout(() => {
          controller.abort(new Error(`tool timeout (${limit} ${timeoutMs})`));
          stop({
            output: `Tool ${tool.name} timed out after ${timeoutMs} ms (${limit}).`,
            exitCode: 1,
            metadata: { timed_out: true },
            errorKind: { type: 'timeout', op: tool.name, duration_ms: timeoutMs },
          });
        }, timeoutMs);
  let ended = false;
  let streamed = 0;
  const cap = ctx.governance.toolOutputBytes;
  // Live output is redacted like the result, in whole lines (see LiveOutputRedactor).
  const live = state.deps.governance.redactor.live();
  const show = (delta: string): void => {
    if (streamed >= cap) return;
    streamed += Buffer.byteLength(delta);
    ctx.emit('tool_output_delta', { id: call.id, name: tool.name, delta });
    if (streamed >= cap)
      ctx.emit('tool_output_delta', {
        id: call.id,
        name: tool.name,
        delta: `[live output stopped at ${cap} bytes; the full output comes with the result]\n`,
      });
  };
  // The call's confined file access: a lease of the workspace descriptor taken on first use, returned once the
  // tool's own promise settles (not when a timeout stops the call: a tool still winding down keeps a valid root).
  // A call whose permission looked at its paths opens them only where they led then (openGuardOf).
  const files = new WorkspaceFiles(state.deps.workspace, state.deps.fileOwner, openGuardOf(state));
  const toolContext: ToolContext = {
    workspace: ctx.workspace,
    files,
    signal: controller.signal,
    sessionId: ctx.sessionId,
    runId: ctx.runId,
    toolCallId: call.id,
    onOutput: (delta: string): void => {
      if (ended || streamed >= cap) return;
      for (const line of live.push(delta)) show(line);
    },
    ...(nested ? { nested } : {}),
    ...(state.deps.commands ? { commands: state.deps.commands.forOrigin(call.origin) } : {}),
    ...(state.deps.web ? { web: state.deps.web } : {}),
    // Only the model's own calls answer into the transcript, where an image can follow them.
    ...(call.origin === 'model' && state.deps.images ? { images: state.deps.images } : {}),
    ...(tool.delegates && state.deps.delegation ? { delegation: state.deps.delegation, runSignal: ctx.signal } : {}),
    ...(tool.asksUser && state.deps.governance.questions
      ? { questions: userQuestions(state.deps.governance.questions, state, controller.signal) }
      : {}),
    ...(tool.delegates && call.origin === 'host_direct' && call.confirmationInheritance
      ? { confirmationInheritance: call.confirmationInheritance }
      : {}),
  };
  const execution = (async () => tool.execute(state.args, toolContext))()
    .catch((error: unknown): ToolResult =>
      error instanceof WorkspaceChangedError
        ? workspaceChangedResult(error)
        : {
            output: `Tool ${tool.name} failed: ${error instanceof Error ? error.message : String(error)}`,
            exitCode: 1,
          },
    )
    .finally(() => files.release());
  try {
    const outcome = await Promise.race([
      execution.then((result) => ({ result, finished: true })),
      stopped.then((result) => ({ result, finished: false })),
    ]);
    // Lines held back as a possible secret are shown, redacted, only when the tool finished by itself.
    if (outcome.finished) for (const line of live.flush()) show(line);
    if (outcome.result.metadata?.reason === 'workspace_changed') {
      ctx.emit('workspace_warning', { kind: 'changed', workspace: ctx.workspace, message: outcome.result.output });
    }
    return outcome.result;
  } finally {
    ended = true;
    clearTimeout(timer);
    ctx.signal.removeEventListener('abort', onRunAbort);
  }
}

/** ask_user's way to the session's question broker: the question bound to this call, announced as user_question. */
function userQuestions(broker: QuestionBroker, state: ToolCallState, signal: AbortSignal): UserQuestions {
  const { ctx, call } = state;
  return {
    ask: (question) =>
      broker.ask({
        ...question,
        runId: ctx.runId,
        toolCallId: call.id,
        timeoutMs: state.deps.governance.confirmation.defaultTimeoutMs,
        signal,
        onAsked: (pending) =>
          ctx.emit('user_question', {
            question_id: pending.questionId,
            question: pending.question,
            options: pending.options,
            allow_free_text: pending.allowFreeText,
            tool_call_id: pending.toolCallId,
            timeout_ms: pending.timeoutMs,
          }),
      }),
  };
}
