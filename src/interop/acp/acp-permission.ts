import type { AgentContext, PermissionOption } from '@agentclientprotocol/sdk';
import { asAgentEventEnvelope, type KnownEvent } from '../../protocol/agent-event-envelope.js';
import type { Caller } from '../../runtime/ports/caller.js';
import { hasScope } from '../../runtime/ports/caller.js';
import type { AgentSession } from '../../runtime/session-kernel/agent-session.js';
import { acpToolKind } from './acp-tool-kind.js';

/** The options of a session/request_permission; "allow always" says when it acts as allow once for this caller. */
export function permissionOptions(alwaysActsOnce: boolean): PermissionOption[] {
  return [
    { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
    {
      optionId: 'allow_always',
      name: alwaysActsOnce
        ? "Allow always (acts as allow once here: the operator's policy asks for this call and this token lacks host_direct)"
        : 'Allow always (this session: the same tool with the same arguments it is checked on)',
      kind: 'allow_always',
    },
    { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  ];
}

/**
 * Ask the editor about one confirmation_required event with session/request_permission and answer the
 * session's confirmation broker with its choice: allow once, allow always (the broker's grant, bounded by the
 * caller's rights), or reject; a cancelled request rejects. The request is withdrawn ($/cancel_request) when
 * the confirmation is settled elsewhere first (another client, its timeout, a cancel); an error answer rejects. Never throws.
 */
export async function askPermission(
  client: AgentContext,
  session: AgentSession,
  caller: Caller,
  event: KnownEvent<'confirmation_required'>,
): Promise<void> {
  const { tool_id: toolId, tool_name: toolName, rule } = event.payload;
  const pending = session.governance.pendingConfirmations().find((p) => p.toolId === toolId);
  if (!pending) return;
  const mayPassFloor = hasScope(caller, 'host_direct');
  const withdraw = new AbortController();
  const unwatch = session.events.listen((envelope) => {
    const later = asAgentEventEnvelope(envelope);
    if (
      (later.type === 'confirmation_received' || later.type === 'confirmation_timeout') &&
      later.payload.tool_id === toolId
    )
      withdraw.abort();
  });
  const settle = (answer: Parameters<AgentSession['governance']['answerConfirmation']>[1]) => {
    try {
      session.governance.answerConfirmation(toolId, answer);
    } catch {
      // Settled elsewhere meanwhile (409) or the session closed: that answer stands.
    }
  };
  try {
    const answer = await client
      .request(
        'session/request_permission',
        {
          sessionId: session.id,
          toolCall: {
            toolCallId: toolId,
            title: toolName,
            name: toolName,
            kind: acpToolKind(toolName),
            status: 'pending',
            rawInput: pending.args,
          },
          options: permissionOptions(pending.alwaysNeedsHostDirect !== false && !mayPassFloor),
          _meta: {
            argsDigest: pending.argsDigest,
            timeoutMs: pending.timeoutMs,
            ...(rule !== undefined ? { rule } : {}),
          },
        },
        { cancellationSignal: withdraw.signal, stopWaitingOnCancel: true },
      )
      .catch(() => undefined);
    if (withdraw.signal.aborted) return;
    const chosen = answer?.outcome.outcome === 'selected' ? answer.outcome.optionId : undefined;
    const approved = chosen === 'allow_once' || chosen === 'allow_always';
    settle({
      approved,
      argsDigest: pending.argsDigest,
      ...(chosen === 'allow_always' ? { always: true, mayPassFloor } : {}),
      ...(approved
        ? {}
        : {
            reason:
              answer === undefined
                ? 'the editor answered the permission request with an error'
                : chosen === undefined
                  ? 'the editor cancelled the permission request'
                  : 'rejected in the editor',
          }),
    });
  } finally {
    unwatch();
  }
}
