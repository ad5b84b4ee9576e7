import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import type { TestServer } from '../support/test-server.js';
import { ownForSandbox } from './changes-helpers.js';

/** Tenant team-a, `sessions` only. */
export const MINE = 'token-forkcopy-team-a-000001';
/** Tenant team-b, `sessions` only. */
export const THEIRS = 'token-forkcopy-team-b-000001';
/** The servers' apiTokens (two tenants: each has its own directory under the root). */
export const TOKENS = [
  { token: MINE, principal: 'a', tenantId: 'team-a', scopes: ['sessions'] },
  { token: THEIRS, principal: 'b', tenantId: 'team-b', scopes: ['sessions'] },
];

/** The Authorization header of a token. */
export const as = (token: string) => ({ authorization: `Bearer ${token}` });

/** The SessionInfo fields the copy tests read. */
export interface ForkInfo {
  id: string;
  workspace: string;
  forkedFrom?: { sessionId: string; atRunId?: string; atMessage: number; workspace?: string; tree?: string };
}

/** POST .../fork with `body` as `token`; the response (status not checked). */
export function forkAs(t: TestServer, token: string, id: string, body: Record<string, unknown>): request.Test {
  return request(t.url).post(`/v1/sessions/${id}/fork`).set(as(token)).send(body);
}

/** A run as `token`, waited for; its id. */
export async function runAs(t: TestServer, token: string, id: string, input: string): Promise<string> {
  const res = await request(t.url)
    .post(`/v1/sessions/${id}/runs`)
    .set(as(token))
    .send({ input, wait: true })
    .expect(200);
  return res.body.runId as string;
}

/** `<root>/<tenant>/<name>` with `files`, owned for the sandbox, and a session of `token` on it. */
export async function tenantWorkspace(
  t: TestServer,
  token: string,
  tenant: string,
  name: string,
  files: Record<string, string>,
  options: Record<string, unknown> = {},
): Promise<{ ws: string; id: string }> {
  const ws = join(t.root, tenant, name);
  mkdirSync(ws, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(ws, path, '..'), { recursive: true });
    writeFileSync(join(ws, path), content);
  }
  ownForSandbox(t, join(t.root, tenant));
  const res = await request(t.url)
    .post('/v1/sessions')
    .set(as(token))
    .send({ workspace: ws, ...options })
    .expect(201);
  return { ws, id: res.body.session.id as string };
}
