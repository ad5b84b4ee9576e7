import type { CodeConfig } from '../../config/code-config.js';
import { CodeError } from '../../errors.js';
import type { ChatMessage } from '../../protocol/chat-message.js';
import type { ForkOrigin, ForkRequest } from '../../protocol/fork.js';
import type { SessionOptions } from '../../protocol/session-options.js';
import { hasScope, type Caller } from '../ports/caller.js';
import type { AgentSession } from '../session-kernel/agent-session.js';
import type { WorkspacePin } from '../workspace/workspace-directory.js';

/** What a fork starts from: its transcript and where it came from (SessionInfo.forkedFrom). */
export interface ForkSeed {
  readonly messages: ChatMessage[];
  readonly origin: ForkOrigin;
  /** A copy fork's new directory as the server made it: the session's pin must be this one (WORKSPACE_CHANGED). */
  readonly workspacePin?: WorkspacePin;
}

function atMessageError(message: string): CodeError {
  return new CodeError('VALIDATION_ERROR', `body.atMessage: ${message}`, {
    issues: [{ path: 'body.atMessage', message }],
  });
}

/**
 * Where a fork of `parent` cuts its committed transcript (a busy session's active run has committed nothing yet):
 * just before the run `atRunId` (the transcript as that run found it: 404 RUN_NOT_FOUND, 409
 * FORK_POINT_UNAVAILABLE when it never started or the transcript was compacted or rewritten since), at the history
 * index `atMessage` (400 when out of range or between a tool call and its results), or after the last message.
 */
export function forkSeed(parent: AgentSession, request: ForkRequest, forkTenantId: string): ForkSeed {
  const messages = parent.transcript.messages;
  let atMessage = messages.length;
  if (request.atRunId !== undefined) {
    const runId = request.atRunId;
    // RUN_NOT_FOUND (404) when the session has no such run (or no longer retains it).
    const record = parent.runs.get(runId);
    if (record.transcriptStart === undefined)
      throw new CodeError(
        'FORK_POINT_UNAVAILABLE',
        `atRunId: run ${runId} has no recorded start in the transcript (${record.status === 'queued' ? 'it has not started yet' : 'it was reverted and then dropped by a later run, or recorded by an older server'}); fork at a message index (atMessage) instead`,
        { runId, field: 'atRunId' },
      );
    if ((record.transcriptEpoch ?? 0) !== parent.transcript.epoch || record.transcriptStart > messages.length)
      throw new CodeError(
        'FORK_POINT_UNAVAILABLE',
        `atRunId: the transcript run ${runId} started from was compacted into a summary (or cleared or rewritten) since, so it cannot be split there; fork at a message index (atMessage) of the current history instead`,
        { runId, field: 'atRunId' },
      );
    atMessage = record.transcriptStart;
  } else if (request.atMessage !== undefined) {
    atMessage = request.atMessage;
    if (atMessage > messages.length)
      throw atMessageError(`must be at most ${messages.length}, the number of messages in the history`);
  }
  // Never half a round: the fork must not end on a tool call whose results it cuts off.
  if (atMessage < messages.length && messages[atMessage]?.role === 'tool')
    throw atMessageError(
      `message ${atMessage} is a tool result: the fork would keep a tool call without its results; fork before the assistant message that made the call, or after its results`,
    );
  const parentTenant = parent.config.ownerTenantId;
  return {
    messages: messages.slice(0, atMessage),
    origin: {
      sessionId: parent.id,
      ...(parentTenant !== forkTenantId ? { tenantId: parentTenant } : {}),
      ...(request.atRunId !== undefined ? { atRunId: request.atRunId } : {}),
      atMessage,
    },
  };
}

/**
 * The fork's creation options: the parent's options without what is not copied (its id, tenant and principal
 * become the forking caller's; hooks and the budget host are the parent's hosts', not carried over), on the
 * parent's workspace and current model.
 */
export function forkOptions(parent: AgentSession, sessionId: string): SessionOptions {
  const {
    sessionId: _id,
    tenantId: _tenant,
    principal: _principal,
    hooks: _hooks,
    budgetHost: _budgetHost,
    resume: _resume,
    ...kept
  } = parent.config.options;
  return {
    ...kept,
    workspace: parent.workspace,
    model: parent.config.model.id,
    sessionId,
  };
}

/**
 * The fork's options re-checked as a creation by the forking caller: each one its scopes do not allow is named in
 * one 403 (details.options). Without host_direct a caller inherits no auto_approve, no securityProvider "none", no
 * network, no stdio MCP server, no permission policy that lifted the operator's floor and no host commands.
 */
export function assertForkGrants(
  parent: AgentSession,
  options: SessionOptions,
  caller: Caller,
  config: CodeConfig,
): void {
  if (hasScope(caller, 'host_direct')) return;
  const refused: string[] = [];
  if (
    options.confirmationPolicy?.timeoutAction === 'auto_approve' &&
    config.defaultConfirmationPolicy?.timeoutAction !== 'auto_approve'
  )
    refused.push('confirmationPolicy.timeoutAction');
  if (options.securityProvider?.type === 'none') refused.push('securityProvider.type');
  if (options.sandboxNetwork === 'allowed' && config.sandbox.network !== 'allowed') refused.push('sandboxNetwork');
  for (const [index, server] of (options.mcpServers ?? []).entries())
    if (server.transport.type === 'stdio') refused.push(`mcpServers.${index}`);
  // The parent's own policy replaced the operator's (its creator had host_direct): the fork would not be the same.
  if (options.permissionPolicy !== undefined && parent.config.permissionFloor === undefined)
    refused.push('permissionPolicy');
  // Without a working sandbox only a host_direct creator's commands run (on the host).
  if (parent.config.commands.hostCommands && parent.sandbox.kind === 'none') refused.push('sandbox');
  if (refused.length === 0) return;
  throw new CodeError(
    'FORBIDDEN',
    `${refused.join(', ')}: the parent session has ${refused.length === 1 ? 'this option' : 'these options'} from a host_direct caller, and a fork is checked as a creation with the forking caller's scopes; fork with a host_direct token, or create a new session without ${refused.length === 1 ? 'it' : 'them'}`,
    { field: refused[0], options: refused, scope: 'host_direct' },
  );
}
