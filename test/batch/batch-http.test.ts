import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

type Msg = { role: string; content?: unknown; tool_call_id?: string };
type Item = {
  index: number;
  id: string | null;
  step: number;
  success: boolean;
  exit_code: number | null;
  error_kind: Record<string, unknown> | null;
};

// The batch through the front door: the real tool invoker validates each child, reports its error kind,
// and the model sees the seed's per-item blocks.
describe('batch over HTTP', () => {
  let t: TestServer;
  let id: string;
  beforeAll(async () => {
    t = await startTestServer({ files: { 'notes/a.txt': 'alpha\nbeta\n' } });
    id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
  });
  afterAll(async () => {
    await t.close();
  });

  it('host-direct: staged steps, $ref between steps, child error kinds, partial failure is a success', async () => {
    const body = (
      await request(t.url)
        .post(`/v1/sessions/${id}/tools/batch`)
        .send({
          args: {
            invocations: [
              { id: 'find', tool: 'glob', args: { pattern: 'notes/*.txt' } },
              { id: 'missing', tool: 'read', args: { file_path: 'absent.txt' } },
              { id: 'bad', tool: 'read', args: { path: 'notes/a.txt' } },
              { id: 'open', tool: 'read', args: { file_path: { $ref: 'find.output_lines.0' } }, step: 2 },
            ],
          },
        })
        .expect(200)
    ).body as { output: string; exitCode: number; metadata: Record<string, unknown> };
    expect(body.exitCode).toBe(0);
    expect(body.metadata).toMatchObject({
      status: 'partial_failure',
      execution_mode: 'staged',
      steps: 2,
      highest_step: 2,
      total_count: 4,
      success_count: 2,
      failed_indices: [1, 2],
      requested_concurrency: 8,
      applied_concurrency: 3,
    });
    const results = body.metadata.results as Item[];
    expect(results.map((item) => [item.index, item.id, item.step, item.success])).toEqual([
      [0, 'find', 1, true],
      [1, 'missing', 1, false],
      [2, 'bad', 1, false],
      [3, 'open', 2, true],
    ]);
    expect(results[1].error_kind).toEqual({ type: 'not_found', path: 'absent.txt' });
    expect(results[2].error_kind).toMatchObject({ type: 'invalid_argument' });
    expect(body.output).toContain('--- [3 / step 2: read · open] ---\n     1\talpha');
    expect(body.output).toContain('--- [2 / step 1: read · bad] ---\nERROR: Invalid arguments for read');
    expect(body.output).toContain('retry only failed indices');
  });

  it('model-owned: every item failing is an error result whose tool_end carries the partial_failure kind', async () => {
    t.fake.script(
      {
        toolCalls: [
          {
            id: 'b1',
            name: 'batch',
            arguments: {
              invocations: [
                { tool: 'read', args: { file_path: 'nope1.txt' } },
                { tool: 'read', args: { file_path: 'nope2.txt' } },
              ],
            },
          },
        ],
      },
      { text: 'done' },
    );
    const run = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'go', wait: true }).expect(200);
    const tool = t.fake.requests
      .flatMap((req) => req.body.messages as Msg[])
      .find((m) => m.role === 'tool' && m.tool_call_id === 'b1');
    expect(String(tool?.content)).toMatch(/^--- \[0 \/ step 1: read\] ---\nERROR: File not found: nope1\.txt/);
    expect(String(tool?.content)).toContain('All 2 invocation(s) failed.');
    const events = (
      await request(t.url).get(`/v1/sessions/${id}/runs/${run.body.runId}/events?after=-1&limit=1000`).expect(200)
    ).body.events as {
      type: string;
      payload: Record<string, unknown>;
    }[];
    const end = events.find((e) => e.type === 'tool_end' && e.payload.id === 'b1');
    expect(end?.payload).toMatchObject({
      exit_code: 1,
      error_kind: { type: 'partial_failure', failed: 2, total: 2 },
      metadata: { status: 'failed' },
    });
    t.fake.assertDone();
  });
});
