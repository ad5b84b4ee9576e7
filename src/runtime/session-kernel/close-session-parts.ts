import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { SessionKernel } from './session-kernel.js';

/**
 * Close a session's parts for `reason`, in order: abort host-direct calls and children, settle the
 * confirmations and tell session_end hooks it owns, stop the active run and wait for it, close children,
 * emit session_closed, stop its MCP servers (closed by its client: remove its commands' $HOME), then close its hook
 * engine once queued observations finish.
 * Idempotent: false when the session was already closed.
 */
export async function closeSessionParts(
  parts: SessionKernel,
  config: ResolvedSessionConfig,
  reason: string,
): Promise<boolean> {
  if (!parts.lifecycle.close(reason)) return false;
  const sessionId = config.sessionId;
  const closed = new Error('session closed');
  parts.directCalls.abortAll(closed);
  // Every child of the session stops at once (background ones included).
  parts.tasks.cancelAll(closed);
  // A child shares its parent's broker and hooks: the parent settles and closes them.
  const owned = parts.governance.owned;
  owned?.governance.broker.rejectAll('session closed');
  // Stopped to be resumed (shutdown, passivation, a lost lease): its questions are kept for the snapshot.
  if (parts.lifecycle.keepsCheckpoints()) owned?.governance.questions?.suspendAll();
  else owned?.governance.questions?.cancelAll();
  owned?.hooks.observe('session_end', { session_id: sessionId, reason, labels: config.labels }, { sessionId });
  await parts.runs.abortAndWait(closed);
  await parts.tasks.closeChildren();
  parts.emit(undefined, 'session_closed', { reason });
  await parts.mcp.close();
  // Closed by its client (not passivated, lost or shut down): its commands' $HOME goes with it.
  if (reason === 'closed') {
    await parts.sandbox.close().catch(() => undefined);
    // So does its shadow git store (a node-local cache; the change sets stay until the session is purged).
    await parts.changes?.removeShadow().catch(() => undefined);
  }
  // session_end was queued above: let queued observations finish (each is bounded by its timeoutMs), then close.
  const engine = owned?.hooks;
  if (engine) void engine.idle().finally(() => engine.close());
  return true;
}
