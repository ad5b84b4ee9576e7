/** The message of anything thrown. */
export function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // fetch failures say only "fetch failed"; the cause says why (ECONNREFUSED, DNS, TLS, ...).
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return cause && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message;
}

/** A connection failure; its message names the server, `detail` is the rest. */
export class McpConnectionError extends Error {
  constructor(
    readonly server: string,
    readonly detail: string,
    cause?: unknown,
  ) {
    super(`MCP server "${server}" ${detail}`, cause === undefined ? undefined : { cause });
    this.name = 'McpConnectionError';
  }
}

/** True for fetch failures on a keep-alive socket the server had already closed (it restarted). */
export function isStaleSocketError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE') return true;
  }
  return false;
}
