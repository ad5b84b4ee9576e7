/** A path segment that is a parameter (`:id` in a route url). */
const isParam = (segment: string): boolean => segment.startsWith(':');

/** `dead-letters` -> `DeadLetters`. */
function pascal(word: string): string {
  return word
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== '')
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}

/** `sessions` -> `session` (a collection named before one of its ids). */
function singular(word: string): string {
  return word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word;
}

/**
 * The operationId of a route, from its method and url, stable and unique (the document refuses duplicates):
 * the method, then each literal segment after `/v1` in PascalCase, a collection named before one of its ids
 * in the singular (one without a singular takes `By<id>`). `GET /v1/sessions` is `getSessions`,
 * `GET /v1/sessions/:id` `getSession`, `POST /v1/sessions/:id/runs/:runId/cancel` `postSessionRunCancel`,
 * `GET /v1/sessions/:id/mcp/:name` `getSessionMcpByName`.
 */
export function operationIdOf(method: string, url: string): string {
  const segments = url.split('/').filter((s) => s !== '');
  const named: string[] = [];
  segments.forEach((segment, i) => {
    if (isParam(segment) || (i === 0 && segment === 'v1')) return;
    const next = segments[i + 1];
    if (next === undefined || !isParam(next)) named.push(pascal(segment));
    // A name that has no singular (`mcp/:name`, `console/:asset`) takes its id: `McpByName`.
    else if (singular(segment) === segment) named.push(`${pascal(segment)}By${pascal(next.slice(1))}`);
    else named.push(pascal(singular(segment)));
  });
  return method.toLowerCase() + named.join('');
}

/**
 * The tag of a route, grouping the operations of one resource: a session's sub-resource (`runs`, `memory`,
 * `queue` ...), else the first segment after `/v1` (`sessions`, `agui`, `admin`, `auth`), else `server`
 * (health, metrics, the console, ACP's WebSocket).
 */
export function operationTagOf(url: string): string {
  const segments = url.split('/').filter((s) => s !== '');
  if (segments[0] !== 'v1') return segments[0] === 'acp' ? 'acp' : 'server';
  if (segments[1] === 'sessions' && segments[2] !== undefined && segments[3] !== undefined) return segments[3];
  return segments[1] ?? 'server';
}
