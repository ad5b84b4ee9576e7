/**
 * The key under which a session's sandbox disk (its $HOME plus what its commands added to the workspace) is recorded
 * in the tenant's stored bytes (TenantQuotas.recordStored), beside its snapshot's own entry. A NUL cannot be in a
 * session id, so the key never names a snapshot.
 */
export function sandboxUsageKey(sessionId: string): string {
  return `\0sandbox\0${sessionId}`;
}
