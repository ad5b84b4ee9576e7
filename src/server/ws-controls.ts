import type { RunControlReceipt } from '../protocol/run-control.js';
import { assertInputBound } from './input-bound.js';
import { CodeError } from '../errors.js';
import type { WsClientMessage, WsControl } from '../protocol/ws-messages.js';
import { hasScope, type Caller } from '../runtime/ports/caller.js';
import type { AgentSession } from '../runtime/session-kernel/agent-session.js';
import type { ServerContext } from './server-context.js';

/** An `error` control frame (details only when there are some). */
export function errorControl(
  code: string,
  message: string,
  field?: string,
  details?: Record<string, unknown>,
): WsControl {
  return {
    type: 'error',
    payload: {
      code,
      message,
      ...(field !== undefined ? { field } : {}),
      ...(details !== undefined && Object.keys(details).length > 0 ? { details } : {}),
    },
  };
}

/** A thrown error as an error frame naming `field`: a CodeError's code and message, anything else INTERNAL_ERROR with `fallback` (no internals). */
function thrownControl(error: unknown, fallback: string, field: string, withDetails = false): WsControl {
  if (error instanceof CodeError)
    return errorControl(error.code, error.message, field, withDetails ? error.details : undefined);
  return errorControl('INTERNAL_ERROR', fallback, field);
}

/** Cancel a run of the session for a `cancel` message: cancel_result, or the refusal (RUN_NOT_FOUND and the like) as an error frame naming runId. */
export function cancelControl(session: AgentSession, message: Extract<WsClientMessage, { type: 'cancel' }>): WsControl {
  try {
    return {
      type: 'cancel_result',
      payload: { run_id: message.runId, cancelled: session.runs.cancelRun(message.runId) },
    };
  } catch (error) {
    return thrownControl(error, 'cancel failed', 'runId');
  }
}

/**
 * Answer a pending confirmation for a `confirm` message (an "always" may grant past the operator's floor only
 * for a caller with host_direct): confirm_result, or the refusal as an error frame naming toolId.
 */
export function confirmControl(
  session: AgentSession,
  who: Caller,
  message: Extract<WsClientMessage, { type: 'confirm' }>,
): WsControl {
  try {
    session.governance.answerConfirmation(message.toolId, {
      approved: message.approved,
      ...(message.reason !== undefined ? { reason: message.reason } : {}),
      ...(message.argsDigest !== undefined ? { argsDigest: message.argsDigest } : {}),
      ...(message.always === true ? { always: true, mayPassFloor: hasScope(who, 'host_direct') } : {}),
    });
    return { type: 'confirm_result', payload: { tool_id: message.toolId, approved: message.approved } };
  } catch (error) {
    return thrownControl(error, 'confirm failed', 'toolId');
  }
}

/**
 * Hand a registered host's `hook_response` / `command_response` to the request waiting for it (undefined: no
 * frame back), or an error frame when this connection has no such pending request.
 */
export function hostReplyControl(
  registry: { deliver(connectionId: string, message: unknown): boolean },
  connectionId: string | undefined,
  message: Extract<WsClientMessage, { type: 'hook_response' } | { type: 'command_response' }>,
): WsControl | undefined {
  if (connectionId !== undefined && registry.deliver(connectionId, message)) return undefined;
  return errorControl(
    'VALIDATION_ERROR',
    `message.request_id: no pending ${message.type === 'hook_response' ? 'hook' : 'command'} request with this id on this connection`,
    'message.request_id',
  );
}

/**
 * Steer or interrupt the session's active run for a `steer` / `interrupt` message (the rules of the REST
 * routes): run_control_result with the receipt, or the refusal (RUN_NOT_ACTIVE, RUN_NOT_FOUND, 413) as an error frame.
 */
export function runControlControl(
  session: AgentSession,
  message: Extract<WsClientMessage, { type: 'steer' } | { type: 'interrupt' }>,
  maxInputBytes: number,
): WsControl {
  try {
    let receipt: RunControlReceipt;
    if (message.type === 'steer') {
      const { type: _type, runId, ...body } = message;
      assertInputBound(body.input, maxInputBytes);
      receipt = session.runs.steer(runId, body);
    } else {
      const { type: _type, runId, ...body } = message;
      receipt = session.runs.interrupt(runId, body);
    }
    return {
      type: 'run_control_result',
      payload: {
        request_id: receipt.requestId,
        operation: receipt.operation,
        status: receipt.status,
        ...(receipt.reason !== undefined ? { reason: receipt.reason } : {}),
        ...(receipt.turnId !== undefined ? { turn_id: receipt.turnId } : {}),
        ...(receipt.turnRevision !== undefined ? { turn_revision: receipt.turnRevision } : {}),
      },
    };
  } catch (error) {
    return thrownControl(error, `${message.type} failed`, 'runId');
  }
}

/**
 * Answer a question of the agent for an `answer` message (the rules of POST .../questions/:questionId, where
 * exactly one of answer and option is given): answer_result, or the refusal as an error frame.
 */
export function answerControl(
  session: AgentSession,
  message: Extract<WsClientMessage, { type: 'answer' }>,
  ctx: Pick<ServerContext, 'agent' | 'logger'>,
  caller: Caller,
): WsControl {
  const given = [message.answer, message.option, message.declined].filter((value) => value !== undefined).length;
  if (given !== 1)
    return errorControl(
      'VALIDATION_ERROR',
      'message.answer: give exactly one of answer (free text), option (one of the offered options) or declined: true',
      'answer',
    );
  try {
    const { resumesRun } = session.governance.answerQuestion(
      message.questionId,
      message.option !== undefined
        ? { option: message.option }
        : message.declined === true
          ? { declined: true }
          : { answer: message.answer },
    );
    // A question kept across a restart or takeover: its run resumes (its events follow on the socket).
    if (resumesRun !== undefined)
      void ctx.agent.resumeRun(session.id, resumesRun, caller).catch((error: unknown) => {
        // Not resumed (another run is active, say): the question can be answered again.
        session.governance.withdrawAnswer(message.questionId);
        ctx.logger.warn({ err: error, runId: resumesRun }, 'resuming the run of an answered question failed');
      });
    return { type: 'answer_result', payload: { question_id: message.questionId, answered: true } };
  } catch (error) {
    return thrownControl(error, 'answer failed', 'questionId');
  }
}

/**
 * Settle an external task of the session's lane queue for a registered host, by the rules of
 * POST .../queue/external-tasks/:taskId: only a host of the session's own tenant (an admin of another
 * tenant may watch, not answer); 404 EXTERNAL_TASK_NOT_FOUND and 409 EXTERNAL_TASK_SETTLED become error frames.
 */
export function completeExternalTaskControl(
  session: AgentSession,
  who: Caller,
  registered: boolean,
  message: Extract<WsClientMessage, { type: 'external_task_complete' }>,
): WsControl {
  if (!registered)
    return errorControl(
      'VALIDATION_ERROR',
      'message.type: send {"type":"host_register"} on this socket before answering external tasks',
      'message.type',
    );
  if (who.tenantId !== session.config.ownerTenantId)
    return errorControl(
      'FORBIDDEN',
      `external_task_complete: only a host of the session's tenant may complete its external tasks`,
      'task_id',
    );
  if (!session.queue)
    return errorControl(
      'QUEUE_NOT_CONFIGURED',
      `session ${session.id} has no lane queue, so it has no external tasks`,
      'task_id',
    );
  const { type: _type, task_id: taskId, ...answer } = message;
  try {
    session.queue.completeExternalTask(taskId, answer);
    return { type: 'external_task_complete_result', payload: { task_id: taskId, completed: true } };
  } catch (error) {
    return thrownControl(error, 'external_task_complete failed', 'task_id', true);
  }
}

/**
 * The refusal of a session-bound message on a socket that follows a session another node owns: the owner's
 * SESSION_OWNED_ELSEWHERE error (from ensureLocal, naming its node and URL, also as details ownerNodeId and
 * ownerUrl, as the REST 421 has them) and the REST call to make there.
 */
export function ownedElsewhereControl(owner: CodeError, sessionId: string, message: WsClientMessage): WsControl {
  const path = `/v1/sessions/${encodeURIComponent(sessionId)}`;
  const rest =
    message.type === 'confirm'
      ? `answer the confirmation with POST ${path}/confirmations/${encodeURIComponent(message.toolId)} at the owner`
      : message.type === 'answer'
        ? `answer the question with POST ${path}/questions/${encodeURIComponent(message.questionId)} at the owner`
        : message.type === 'cancel'
          ? `cancel the run with POST ${path}/runs/${encodeURIComponent(message.runId)}/cancel at the owner`
          : message.type === 'steer' || message.type === 'interrupt'
            ? `${message.type} the run with POST ${path}/runs/${encodeURIComponent(message.runId)}/${message.type} at the owner`
            : message.type === 'external_task_complete'
              ? `complete the task with POST ${path}/queue/external-tasks/${encodeURIComponent(message.task_id)} at the owner`
              : 'open the events WebSocket at the owner to register as a host';
  const field =
    message.type === 'confirm'
      ? 'toolId'
      : message.type === 'answer'
        ? 'questionId'
        : message.type === 'cancel' || message.type === 'steer' || message.type === 'interrupt'
          ? 'runId'
          : message.type === 'external_task_complete'
            ? 'task_id'
            : undefined;
  return errorControl(
    owner.code,
    `${message.type}: ${owner.message}; this socket only follows the session's events from another node, so ${rest}`,
    field,
    owner.details,
  );
}
