import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

// The seed's verification example, verbatim (API.md "Verification").
const SEED_VERIFICATION = {
  subject: 'docs smoke',
  commands: [{ id: 'echo', kind: 'command', description: 'echo works', command: 'printf verify', required: true }],
};

describe('verification over HTTP and in runs', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      files: {
        'package.json': JSON.stringify({
          name: 'demo',
          scripts: { test: 'node -e "process.exit(1)"', lint: 'node -e "0"' },
        }),
        'package-lock.json': '{}',
      },
    });
  });
  afterAll(async () => {
    await t.close();
  });

  it("runs the seed's example verbatim: a passed report in the seed's shape, and the seed's summary text", async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    const report = (await request(t.url).post(`/v1/sessions/${id}/verifications`).send(SEED_VERIFICATION).expect(201))
      .body;
    expect(report).toMatchObject({
      schema: 'a3s.verification_report.v1',
      subject: 'docs smoke',
      status: 'passed',
      residual_risks: [],
      session_id: id,
    });
    expect(report.checks).toEqual([
      expect.objectContaining({
        id: 'echo',
        kind: 'command',
        description: 'echo works',
        status: 'passed',
        required: true,
        suggested_tools: ['bash'],
        command: 'printf verify',
        exit_code: 0,
        output_tail: 'verify',
      }),
    ]);
    expect(report.checks[0].residual_risk).toBeUndefined();
    const summary = (await request(t.url).get(`/v1/sessions/${id}/verifications/summary`).expect(200)).body;
    expect(summary).toMatchObject({
      status: 'passed',
      report_count: 1,
      required_check_count: 1,
      pending_required_check_count: 0,
      failed_check_count: 0,
      residual_risk_count: 0,
    });
    expect(summary.text).toBe('Verification passed: 1 report, 1 required check.');
    expect(summary).toMatchObject({
      verificationStatus: 'passed',
      verificationReportCount: 1,
      verificationSummaryText: summary.text,
    });
  });

  it('keeps failing reports, keeps unknown kinds as given, and answers bad bodies with 400 naming the field', async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    const failing = (
      await request(t.url)
        .post(`/v1/sessions/${id}/verifications`)
        .send({
          subject: 'api',
          commands: [
            { id: 'unit', kind: 'acceptance_command', command: 'echo tests; exit 1', required: true },
            { id: 'style', kind: 'lint', command: 'exit 0', expect_exit: 0 },
          ],
        })
        .expect(201)
    ).body;
    expect(failing).toMatchObject({
      status: 'failed',
      summary: { total: 2, passed: 1, failed: 1, required_failed: 1 },
    });
    expect(failing.checks[0]).toMatchObject({
      kind: 'acceptance_command',
      status: 'failed',
      exit_code: 1,
      residual_risk: 'verification command exited with code 1, expected 0: echo tests; exit 1',
    });
    await request(t.url).post(`/v1/sessions/${id}/verifications`).send(SEED_VERIFICATION).expect(201);
    const list = (await request(t.url).get(`/v1/sessions/${id}/verifications`).expect(200)).body.reports;
    expect(list.map((r: { subject: string }) => r.subject)).toEqual(['api', 'docs smoke']);
    const summary = (await request(t.url).get(`/v1/sessions/${id}/verifications/summary`).expect(200)).body;
    expect(summary.text).toBe(
      'Verification failed: 1 failed check across subjects: api. 2 reports, 2 required checks. Residual risks: 1.',
    );
    const dup = await request(t.url)
      .post(`/v1/sessions/${id}/verifications`)
      .send({
        subject: 'x',
        commands: [
          { id: 'a', command: 'true' },
          { id: 'a', command: 'true' },
        ],
      })
      .expect(400);
    expect(dup.body.error.message).toBe('body.commands.1.id: duplicate id "a" (already used by commands.0.id)');
    const empty = await request(t.url)
      .post(`/v1/sessions/${id}/verifications`)
      .send({ subject: 'x', commands: [{ id: 'a', kind: '', command: 'true' }] })
      .expect(400);
    expect(empty.body.error.message).toMatch(/^body\.commands\.0\.kind: /);
  });

  it("detects the seed's node-default preset", async () => {
    const id = (await request(t.url).post('/v1/sessions').send({}).expect(201)).body.session.id;
    const presets = (await request(t.url).get(`/v1/sessions/${id}/verifications/presets`).expect(200)).body.presets;
    expect(presets).toEqual([
      expect.objectContaining({
        id: 'node-default',
        project_kind: 'node',
        commands: [
          expect.objectContaining({ id: 'node:test', command: 'npm test', required: true }),
          expect.objectContaining({ id: 'node:lint', command: 'npm run lint', required: false }),
        ],
      }),
    ]);
  });

  it("a model's bash call that covers a preset command attaches a shell:<id> report to the run's AgentResult", async () => {
    const id = (await request(t.url).post('/v1/sessions').send({ autoSave: true }).expect(201)).body.session.id;
    t.fake.script(
      { toolCalls: [{ id: 'v1', name: 'bash', arguments: { command: 'npm test -- --silent' } }] },
      { text: 'tests fail' },
    );
    const run = await request(t.url)
      .post(`/v1/sessions/${id}/runs`)
      .send({ input: 'run the tests', wait: true })
      .expect(200);
    expect(run.body.result).toMatchObject({
      verificationStatus: 'failed',
      failedVerificationCount: 1,
      verificationReportCount: 1,
    });
    expect(run.body.result.verificationSummaryText).toBe(
      'Verification failed: 1 failed check across subjects: shell:node:test. 1 report, 1 required check. Residual risks: 1.',
    );
    expect(JSON.parse(run.body.result.verificationSummaryJson)).toMatchObject({
      status: 'failed',
      failed_subjects: ['shell:node:test'],
    });
    const reports = (await request(t.url).get(`/v1/sessions/${id}/verifications`).expect(200)).body.reports;
    expect(reports[0]).toMatchObject({
      subject: 'shell:node:test',
      run_id: run.body.runId,
      checks: [expect.objectContaining({ id: 'node:test', status: 'failed' })],
    });
    t.fake.script({ text: 'nothing to verify' });
    const plain = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'hi', wait: true }).expect(200);
    expect(plain.body.result).toMatchObject({
      verificationStatus: 'skipped',
      verificationReportCount: 0,
      verificationSummaryJson: null,
    });
    t.fake.assertDone();
  });
});
