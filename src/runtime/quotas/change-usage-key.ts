/** The key under which a session's change sets are recorded in the tenant's stored bytes (never a session id: NUL). */
export function changeUsageKey(sessionId: string): string {
  return `\0changes\0${sessionId}`;
}
