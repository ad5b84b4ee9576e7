// Shared by the fork tests (session-fork.test.ts, session-fork-state.test.ts): tokens of two tenants, a
// host_direct one and an admin, and readers of what the fake provider was sent.
import { fileURLToPath } from 'node:url';
import type { RecordedRequest } from '../support/fake-provider.js';

/** Tenant a, `sessions` only. */
export const A = 'token-fork-tenant-a-sessions1';
/** Tenant a, with `host_direct`. */
export const A_HOST = 'token-fork-tenant-a-hostdirect';
/** Tenant b, `sessions` only. */
export const B = 'token-fork-tenant-b-sessions1';
/** An admin of tenant ops. */
export const ADMIN = 'token-fork-admin-ops-tenant01';
/** The servers' apiTokens. */
export const TOKENS = [
  { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: A_HOST, principal: 'ci', tenantId: 'tenant-a', scopes: ['sessions', 'host_direct'] },
  { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
  { token: ADMIN, principal: 'root', tenantId: 'ops', scopes: ['admin'] },
];
/** The stdio MCP echo fixture. */
export const ECHO_SERVER = fileURLToPath(new URL('../fixtures/mcp-echo-server.mjs', import.meta.url));
/** The Authorization header of a token. */
export const as = (token: string) => ({ authorization: `Bearer ${token}` });

/** The conversation a provider request carries (no system message): role and text of each message. */
export const conversation = (r: RecordedRequest) =>
  r.body.messages.filter((m) => m.role !== 'system').map((m) => `${m.role}:${String(m.content ?? '')}`);

/** The SessionInfo fields the fork tests read. */
export interface Info {
  id: string;
  messageCount: number;
  labels: { tenantId?: string; principal?: string };
  forkedFrom?: { sessionId: string; tenantId?: string; atRunId?: string; atMessage: number };
}
