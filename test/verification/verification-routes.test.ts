import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  VerificationReportSchema,
  type VerificationReport,
  type VerificationRequest,
} from '../../src/protocol/verification.js';
import { VerificationSummarySchema } from '../../src/protocol/verification-summary.js';
import { registerVerificationRoutes, type VerificationSessionPort } from '../../src/routes/verifications.js';
import { CodeError } from '../../src/errors.js';
import type { Caller } from '../../src/runtime/ports/caller.js';
import { runVerification } from '../../src/runtime/verification/run-verification.js';
import { pinDirectory, WorkspaceDirectory } from '../../src/runtime/workspace/workspace-directory.js';
import { Authenticator } from '../../src/server/authenticator.js';
import { installErrorHandler } from '../../src/server/error-handler.js';
import { buildOpenApiDocument } from '../../src/server/openapi-document.js';
import { OpenApiRegistry } from '../../src/server/openapi-registry.js';
import type { ServerContext } from '../../src/server/server-context.js';
import { bashRunner, tempWorkspace, type TempWorkspace } from './verification-fixtures.js';

const HOST_TOKEN = 'host-direct-token-0123456789';
const SESSIONS_TOKEN = 'sessions-only-token-0123456789';
const OTHER_TENANT_TOKEN = 'other-tenant-token-0123456789';

/** A session port doing what the real session will: run through bash in its workspace, keep reports. */
class TestSession implements VerificationSessionPort {
  readonly id = 'sess_v';
  private readonly reports: VerificationReport[] = [];
  private ids = 0;
  readonly config: { readonly workspaceDir: WorkspaceDirectory };
  readonly verifications = {
    run: (request: VerificationRequest) => this.runVerification(request),
    list: () => this.listVerifications(),
    // Recording external reports is shown through the real session (test/client/client-seed-surface.test.ts).
    record: () => Promise.reject(new Error('not used by these route tests')),
  };

  constructor(
    readonly workspace: string,
    readonly tenantId: string,
  ) {
    this.config = { workspaceDir: new WorkspaceDirectory(pinDirectory(workspace)) };
  }

  async runVerification(request: VerificationRequest): Promise<VerificationReport> {
    const report = await runVerification(request, {
      runCommand: bashRunner(this.workspace),
      now: () => Date.now(),
      newId: (p) => `${p}_${++this.ids}`,
      sessionId: this.id,
      maxTimeoutMs: 600_000,
    });
    this.reports.push(report);
    return report;
  }

  listVerifications(): VerificationReport[] {
    return [...this.reports];
  }
}

let ws: TempWorkspace;
let app: FastifyInstance;
let url: string;
let openapi: OpenApiRegistry;

beforeAll(async () => {
  ws = tempWorkspace({
    'package.json': JSON.stringify({ scripts: { test: 'node --test', build: 'tsc', lint: 'eslint .' } }),
    'pnpm-lock.yaml': '',
  });
  const session = new TestSession(ws.root, 'acme');
  openapi = new OpenApiRegistry();
  const authenticator = new Authenticator([
    { token: HOST_TOKEN, principal: 'ci', tenantId: 'acme', scopes: ['sessions', 'host_direct'] },
    { token: SESSIONS_TOKEN, principal: 'viewer', tenantId: 'acme', scopes: ['sessions'] },
    { token: OTHER_TENANT_TOKEN, principal: 'intruder', tenantId: 'other', scopes: ['sessions', 'host_direct'] },
  ]);
  // A stand-in context: sessions here are always live, so hydration (agent.ensureLocal) has nothing to do.
  const ctx = { openapi, authenticator, agent: { ensureLocal: async () => undefined } } as unknown as ServerContext;
  app = Fastify();
  installErrorHandler(app);
  registerVerificationRoutes(app, ctx, {
    getSession(id: string, caller: Caller) {
      if (id !== session.id || caller.tenantId !== session.tenantId)
        throw new CodeError('SESSION_NOT_FOUND', `session ${id} not found`, { sessionId: id });
      return session;
    },
  });
  url = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app.close();
  ws.cleanup();
});

async function call(
  method: 'GET' | 'POST',
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe('verification routes over HTTP', () => {
  it('needs the host_direct scope to run commands', async () => {
    const { status, json } = await call('POST', '/v1/sessions/sess_v/verifications', SESSIONS_TOKEN, {
      subject: 's',
      commands: [{ id: 'a', command: 'touch should-not-exist' }],
    });
    expect(status).toBe(403);
    expect(json).toMatchObject({ error: { code: 'FORBIDDEN' } });
    expect(existsSync(join(ws.root, 'should-not-exist'))).toBe(false);
  });

  it("hides another tenant's session (404)", async () => {
    const { status, json } = await call('GET', '/v1/sessions/sess_v/verifications', OTHER_TENANT_TOKEN);
    expect(status).toBe(404);
    expect(json).toMatchObject({ error: { code: 'SESSION_NOT_FOUND' } });
  });

  it('answers 400 naming the field for duplicate ids', async () => {
    const { status, json } = await call('POST', '/v1/sessions/sess_v/verifications', HOST_TOKEN, {
      subject: 's',
      commands: [
        { id: 'a', command: 'true' },
        { id: 'a', command: 'true' },
      ],
    });
    expect(status).toBe(400);
    expect(json).toMatchObject({
      error: {
        code: 'VALIDATION_ERROR',
        message: 'body.commands.1.id: duplicate id "a" (already used by commands.0.id)',
      },
    });
  });

  it('runs a failing and a passing report, then lists and summarises them', async () => {
    const failing = await call('POST', '/v1/sessions/sess_v/verifications', HOST_TOKEN, {
      subject: 'backend',
      commands: [
        { id: 'unit', kind: 'test', command: 'echo "1 failing"; exit 1', required: true },
        { id: 'lint', kind: 'lint', command: 'true', required: false },
      ],
    });
    expect(failing.status).toBe(201);
    const failed = VerificationReportSchema.parse(failing.json);
    expect(failed).toMatchObject({
      status: 'failed',
      subject: 'backend',
      summary: { total: 2, passed: 1, failed: 1, skipped: 0, required_failed: 1 },
    });

    const passing = await call('POST', '/v1/sessions/sess_v/verifications', HOST_TOKEN, {
      subject: 'frontend',
      commands: [{ id: 'test', kind: 'test', command: 'test -f package.json', required: true }],
    });
    expect(passing.status).toBe(201);
    expect(VerificationReportSchema.parse(passing.json).status).toBe('passed');

    const list = await call('GET', '/v1/sessions/sess_v/verifications', SESSIONS_TOKEN);
    expect(list.status).toBe(200);
    expect((list.json.reports as VerificationReport[]).map((r) => [r.subject, r.status])).toEqual([
      ['backend', 'failed'],
      ['frontend', 'passed'],
    ]);

    const summary = await call('GET', '/v1/sessions/sess_v/verifications/summary', SESSIONS_TOKEN);
    expect(summary.status).toBe(200);
    expect(summary.json).toMatchObject({
      verificationStatus: 'failed',
      pendingVerificationCount: 0,
      failedVerificationCount: 1,
      verificationReportCount: 2,
    });
    const text =
      'Verification failed: 1 failed check across subjects: backend. 2 reports, 2 required checks. Residual risks: 1.';
    expect(summary.json).toMatchObject({
      status: 'failed',
      report_count: 2,
      required_check_count: 2,
      failed_check_count: 1,
      residual_risk_count: 1,
      failed_subjects: ['backend'],
      text,
    });
    expect(summary.json.verificationSummaryText).toBe(text);
    expect(VerificationSummarySchema.parse(JSON.parse(String(summary.json.verificationSummaryJson)))).toMatchObject({
      status: 'failed',
      report_count: 2,
    });
  });

  it('lists the presets detected for the Node workspace', async () => {
    const { status, json } = await call('GET', '/v1/sessions/sess_v/verifications/presets', SESSIONS_TOKEN);
    expect(status).toBe(200);
    expect(json.presets).toEqual([
      {
        id: 'node-default',
        project_kind: 'node',
        description: 'Node.js package verification',
        commands: [
          {
            id: 'node:test',
            kind: 'test',
            description: 'Run JavaScript tests',
            command: 'pnpm test',
            required: true,
            expect_exit: 0,
          },
          {
            id: 'node:lint',
            kind: 'lint',
            description: 'Run JavaScript lint checks',
            command: 'pnpm lint',
            required: false,
            expect_exit: 0,
          },
        ],
      },
    ]);
  });

  it('documents the five operations in OpenAPI with shared components', () => {
    const document = buildOpenApiDocument(openapi, { title: 't', version: '0' }) as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(Object.keys(document.paths).sort()).toEqual([
      '/v1/sessions/{id}/verifications',
      '/v1/sessions/{id}/verifications/presets',
      '/v1/sessions/{id}/verifications/reports',
      '/v1/sessions/{id}/verifications/summary',
    ]);
    expect(Object.keys(document.paths['/v1/sessions/{id}/verifications']).sort()).toEqual(['get', 'post']);
    for (const id of [
      'VerificationRequest',
      'VerificationReport',
      'VerificationSummaryResponse',
      'VerificationPreset',
      'RecordVerificationReportsBody',
    ])
      expect(Object.keys(document.components.schemas)).toContain(id);
  });
});
