import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('verification over HTTP and in runs', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      files: {
        'package.json': JSON.stringify({ name: 'demo', scripts: { test: 'node -e "process.exit(1)"', build: 'node -e "process.exit(0)"', lint: 'node -e "0"' } }),
        'package-lock.json': '{}',
      },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it('runs checks host-direct and keeps failing and passing reports with a summary and text', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    const failing = await request(t.url)
      .post(`/v1/sessions/${id}/verifications`)
      .send({ subject: 'api', commands: [{ id: 'unit', kind: 'test', command: 'echo tests; exit 1' }, { id: 'style', kind: 'lint', command: 'exit 0', required: false }] })
      .expect(201);
    expect(failing.body).toMatchObject({ schema: 'a3s.verification_report.v1', session_id: id, subject: 'api', status: 'failed', summary: { total: 2, passed: 1, failed: 1, required_failed: 1 } });
    expect(failing.body.checks[0]).toMatchObject({ id: 'unit', exit_code: 1, status: 'failed' });
    expect(failing.body.checks[0].output_tail).toContain('tests');
    const passing = await request(t.url).post(`/v1/sessions/${id}/verifications`).send({ subject: 'web', commands: [{ id: 'unit', kind: 'test', command: 'exit 0' }] }).expect(201);
    expect(passing.body.status).toBe('passed');
    const list = (await request(t.url).get(`/v1/sessions/${id}/verifications`).expect(200)).body.reports;
    expect(list.map((r: { subject: string }) => r.subject)).toEqual(['api', 'web']);
    const summary = (await request(t.url).get(`/v1/sessions/${id}/verifications/summary`).expect(200)).body;
    expect(summary).toMatchObject({ verificationStatus: 'failed', failedVerificationCount: 1, verificationReportCount: 2 });
    expect(summary.verificationSummaryText).toMatch(/Verification failed/);
    const dup = await request(t.url).post(`/v1/sessions/${id}/verifications`).send({ subject: 'x', commands: [{ id: 'a', command: 'true' }, { id: 'a', command: 'true' }] }).expect(400);
    expect(dup.body.error.message).toContain('commands');
  });

  it('detects presets for a Node workspace', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    const presets = (await request(t.url).get(`/v1/sessions/${id}/verifications/presets`).expect(200)).body.presets;
    expect(presets.map((p: { command: string }) => p.command)).toEqual(expect.arrayContaining(['npm test', 'npm run build', 'npm run lint']));
  });

  it("a model's bash call that runs a preset attaches a report to the run's AgentResult and agent_end", async () => {
    const id = (await request(t.url).post('/v1/sessions').send({ autoSave: true }).expect(201)).body.session.id;
    t.fake.script({ toolCalls: [{ id: 'v1', name: 'bash', arguments: { command: 'npm test' } }] }, { text: 'tests fail' });
    const run = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'run the tests', wait: true }).expect(200);
    expect(run.body.result).toMatchObject({ verificationStatus: 'failed', failedVerificationCount: 1, verificationReportCount: 1 });
    expect(run.body.result.verificationSummaryText).toMatch(/npm test/);
    expect(JSON.parse(run.body.result.verificationSummaryJson)).toMatchObject({ status: 'failed' });
    const events = (await request(t.url).get(`/v1/sessions/${id}/runs/${run.body.runId}/events?after=-1&limit=1000`).expect(200)).body.events as { type: string; payload: Record<string, unknown> }[];
    expect(events.find((e) => e.type === 'agent_end')?.payload).toMatchObject({ verification_status: 'failed', failed_verification_count: 1, verification_report_count: 1 });
    expect(events.some((e) => e.type === 'verification_completed')).toBe(true);
    // A run without a preset command reports skipped verification.
    t.fake.script({ text: 'nothing to verify' });
    const plain = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'hi', wait: true }).expect(200);
    expect(plain.body.result).toMatchObject({ verificationStatus: 'skipped', verificationReportCount: 0, verificationSummaryJson: null });
    t.fake.assertDone();
  });
});
