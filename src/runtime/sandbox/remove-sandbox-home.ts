import { sandboxUsageKey } from '../quotas/sandbox-usage-key.js';
import { sessionIdOf, tenantIdOf, type SessionKey } from '../../stores/session-key.js';
import type { ServerSandbox } from './session-commands.js';

/** Where a purge records that a session's sandbox disk is gone (the tenant's stored bytes). */
export interface SandboxUsageRecorder {
  recordStored(tenantId: string, sessionId: string, bytes: number): void;
}

/**
 * Remove the $HOME of a session that was purged (DELETE ...?purge=true, or the retention sweep) and uncount its disk.
 * A failure is not the purge's: the home is left for the operator (it is under `<data_dir>/sandbox/homes`).
 */
export async function removeSandboxHome(
  sandbox: ServerSandbox | undefined,
  quotas: SandboxUsageRecorder | undefined,
  key: SessionKey,
): Promise<void> {
  const tenantId = tenantIdOf(key);
  const sessionId = sessionIdOf(key);
  await sandbox?.sandbox.removeHome?.(tenantId, sessionId).catch(() => undefined);
  quotas?.recordStored(tenantId, sandboxUsageKey(sessionId), 0);
}
