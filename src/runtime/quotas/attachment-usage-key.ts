/**
 * The key under which a session's attachments are recorded in the tenant's stored bytes (TenantQuotas.recordStored),
 * beside its snapshot's own entry. A NUL cannot be in a session id, so the key never names a snapshot.
 */
export function attachmentUsageKey(sessionId: string): string {
  return `\0attachments\0${sessionId}`;
}
