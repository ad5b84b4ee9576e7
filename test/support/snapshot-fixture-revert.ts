import request from 'supertest';
import type { TestServer, TestServerOptions } from './test-server.js';

/** The generator's `produce` (passed in: this file adds one producer without importing the generator back). */
type Produce = (
  outDir: string,
  tenantId: string,
  sessionId: string,
  options: TestServerOptions,
  body: (p: { t: TestServer; workspace: string; sessionId: string }) => Promise<void>,
) => Promise<string>;

/**
 * (j) An autoSave session of two text runs whose second run was reverted (POST .../runs/:runId/revert): saved with
 * `session.reverted` holding that run's two messages (no trees: it changed no files) and the history cut to two.
 */
export function reverted(outDir: string, produce: Produce): Promise<string> {
  return produce(
    outDir,
    'default',
    'reverted',
    { files: { 'project/hello.txt': 'hello\n' } },
    async ({ t, workspace, sessionId }) => {
      await request(t.url).post('/v1/sessions').send({ sessionId, workspace, autoSave: true }).expect(201);
      const runs = `/v1/sessions/${sessionId}/runs`;
      t.fake.script({ text: 'One.' }, { text: 'Two.' });
      await request(t.url).post(runs).send({ input: 'Say one', wait: true }).expect(200);
      const second = await request(t.url).post(runs).send({ input: 'Say two', wait: true }).expect(200);
      await request(t.url).post(`${runs}/${second.body.runId}/revert`).send({}).expect(200);
    },
  );
}
