import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import request from 'supertest';
import type { RevertResponse } from '../../src/protocol/revert.js';
import { createSession } from '../support/run-helpers.js';
import type { TestServer } from '../support/test-server.js';
import { ownForSandbox } from './changes-helpers.js';

/** A revert's or unrevert's answer, or the error body. */
export type RevertBody = RevertResponse & {
  error?: { code: string; message: string; details?: Record<string, unknown> };
};

/** POST .../runs/:runId/revert expecting `status`. */
export async function revert(
  t: TestServer,
  id: string,
  runId: string,
  status = 200,
  force?: boolean,
): Promise<RevertBody> {
  const res = await request(t.url)
    .post(`/v1/sessions/${id}/runs/${runId}/revert`)
    .send(force === undefined ? {} : { force })
    .expect(status);
  return res.body as RevertBody;
}

/** POST .../unrevert expecting `status`. */
export async function unrevert(t: TestServer, id: string, status = 200, force?: boolean): Promise<RevertBody> {
  const res = await request(t.url)
    .post(`/v1/sessions/${id}/unrevert`)
    .send(force === undefined ? {} : { force })
    .expect(status);
  return res.body as RevertBody;
}

/** Every file under `dir` (not `.git`) and its bytes, as `{path: base64}`. */
export function treeOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else out[relative(dir, full)] = readFileSync(full).toString('base64');
    }
  };
  walk(dir);
  return out;
}

/** A workspace under the server's root with `files`, owned for the sandbox, and a session on it. */
export async function revertWorkspace(
  t: TestServer,
  name: string,
  files: Record<string, string | Buffer>,
  options: Record<string, unknown> = {},
): Promise<{ ws: string; id: string }> {
  const ws = join(t.root, name);
  mkdirSync(ws, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(ws, path, '..'), { recursive: true });
    writeFileSync(join(ws, path), content);
  }
  ownForSandbox(t, ws);
  return { ws, id: await createSession(t, { workspace: ws, ...options }) };
}

/** The text of every message the model got in a request. */
export function requestText(body: { messages: Array<{ content?: unknown }> }): string {
  return body.messages.map((message) => JSON.stringify(message.content ?? '')).join('\n');
}

/** The session's retained events (its trace), session-level ones included. */
export async function sessionEvents(
  t: TestServer,
  id: string,
): Promise<Array<{ type: string; payload: Record<string, unknown> }>> {
  return (await request(t.url).get(`/v1/sessions/${id}/trace`).expect(200)).body.events as Array<{
    type: string;
    payload: Record<string, unknown>;
  }>;
}
