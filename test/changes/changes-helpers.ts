import { execFileSync } from 'node:child_process';
import request from 'supertest';
import type { ChangeSet } from '../../src/protocol/change-set.js';
import type { TestServer } from '../support/test-server.js';

/** GET .../runs/:runId/changes, expecting `status`; the body. */
export async function changesOf(
  t: TestServer,
  sessionId: string,
  runId: string,
  status = 200,
): Promise<ChangeSet & { error?: { code: string; details?: Record<string, unknown> } }> {
  const res = await request(t.url).get(`/v1/sessions/${sessionId}/runs/${runId}/changes`).expect(status);
  return res.body as ChangeSet & { error?: { code: string; details?: Record<string, unknown> } };
}

/** The change set's patch as text. */
export function patchText(changeSet: ChangeSet): string {
  return Buffer.from(changeSet.patch_base64, 'base64').toString('utf8');
}

/** A bash tool call of the fake model. */
export function bash(id: string, command: string): { id: string; name: string; arguments: { command: string } } {
  return { id, name: 'bash', arguments: { command } };
}

/**
 * A root server runs contained commands as sandbox.run_as: what the test wrote in a workspace is given to that user
 * first, as the files a tenant's own commands made would be (a run_as command cannot write root's files).
 */
export function ownForSandbox(t: TestServer, dir: string): void {
  if (process.getuid?.() !== 0) return;
  const user = t.config.sandbox.runAs ?? 'a3s-sandbox';
  execFileSync('chown', ['-R', '-h', `${user}:${user}`, dir]);
}
