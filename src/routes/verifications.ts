import type { FastifyInstance } from 'fastify';
import { ErrorBodySchema, SessionParamsSchema } from '../protocol/http.js';
import {
  RecordVerificationReportsBodySchema,
  VerificationPresetListResponseSchema,
  VerificationReportListResponseSchema,
  VerificationReportSchema,
  VerificationRequestSchema,
  type ExternalVerificationReport,
  type VerificationReport,
  type VerificationRequest,
} from '../protocol/verification.js';
import { VerificationSummaryResponseSchema } from '../protocol/verification-summary.js';
import type { Caller } from '../runtime/ports/caller.js';
import { detectPresets } from '../runtime/verification/detect-presets.js';
import type { WorkspaceAccess } from '../runtime/workspace/workspace-directory.js';
import { summarizeVerifications } from '../runtime/verification/verification-summary.js';
import { addRoute } from '../server/route.js';
import type { ServerContext } from '../server/server-context.js';

/** What the verification routes need of a session. */
export interface VerificationSessionPort {
  readonly id: string;
  /** The session's pinned workspace: presets are read through a lease of its held descriptor, never by its name. */
  readonly config: { readonly workspaceDir: WorkspaceAccess };
  readonly verifications: {
    /** Run the request's commands host-direct through bash, keep the report, and return it. */
    run(request: VerificationRequest): Promise<VerificationReport>;
    /** The session's reports, oldest first. */
    list(): VerificationReport[];
    /** Keep reports produced elsewhere; answers them as kept. */
    record(reports: readonly ExternalVerificationReport[]): Promise<VerificationReport[]>;
  };
}

/** How the verification routes find a session (404 for another tenant's, as everywhere). */
export interface VerificationRouteDeps {
  getSession(id: string, caller: Caller): VerificationSessionPort;
}

/** Verification routes: run checks (host_direct scope), list reports, summary + text, detected presets. */
export function registerVerificationRoutes(
  app: FastifyInstance,
  ctx: ServerContext,
  deps: VerificationRouteDeps,
): void {
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/verifications',
      summary: 'Run verification commands and keep their report',
      description:
        "Runs each command in order through bash in the session workspace (host-direct: needs the host_direct scope) and answers with the VerificationReport (the seed's verifyCommands). A check passes iff its command exited with expectExit; report status: any failed check -> failed; a required check skipped, or a report residual risk -> needs_review; no checks -> skipped; otherwise passed.",
      scope: 'host_direct',
      params: SessionParamsSchema,
      body: VerificationRequestSchema,
      responses: {
        201: VerificationReportSchema,
        400: ErrorBodySchema,
        403: ErrorBodySchema,
        404: ErrorBodySchema,
        410: ErrorBodySchema,
      },
    },
    async ({ params, body, caller, reply }) => {
      const report = await deps.getSession(params.id, caller).verifications.run(body);
      reply.status(201);
      return report;
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'POST',
      url: '/v1/sessions/:id/verifications/reports',
      summary: "Keep verification reports produced elsewhere (the seed's recordVerificationReports)",
      description:
        "Each report `{subject, status, checks, residual_risks?, effect_digest?}` (the seed's fields; a check's command fields are optional) is kept as given, its status being the host's verdict, with an id, this session, no run and its check counts; verification_completed is emitted for each. Reports are evidence (goal tracking reads them), so this needs the host_direct scope. At most 20 reports of 100 checks each.",
      scope: 'host_direct',
      params: SessionParamsSchema,
      body: RecordVerificationReportsBodySchema,
      responses: {
        201: VerificationReportListResponseSchema,
        400: ErrorBodySchema,
        403: ErrorBodySchema,
        404: ErrorBodySchema,
        410: ErrorBodySchema,
      },
    },
    async ({ params, body, caller, reply }) => {
      const reports = await deps.getSession(params.id, caller).verifications.record(body.reports);
      reply.status(201);
      return { reports };
    },
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/verifications',
      summary: "The session's verification reports, oldest first",
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: VerificationReportListResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({ reports: deps.getSession(params.id, caller).verifications.list() }),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/verifications/summary',
      summary:
        "The seed's VerificationSummary of the session's reports, its text, and the AgentResult verification fields",
      description:
        'Every report counts, as in the seed: any failed check or failed report -> failed; pending required checks, residual risks or a report needing review -> needs_review; no reports -> skipped; else passed. `text` is formatVerificationSummary(summary).',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: VerificationSummaryResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => summarizeVerifications(deps.getSession(params.id, caller).verifications.list()),
  );
  addRoute(
    app,
    ctx,
    {
      method: 'GET',
      url: '/v1/sessions/:id/verifications/presets',
      summary: "The seed's verification presets detected from the workspace files",
      description:
        'rust-default (Cargo.toml), node-default (package.json scripts), python-default (pyproject.toml/pytest.ini), go-default (go.mod); nothing is executed.',
      scope: 'sessions',
      params: SessionParamsSchema,
      responses: { 200: VerificationPresetListResponseSchema, 404: ErrorBodySchema },
    },
    async ({ params, caller }) => ({
      presets: await detectPresets(deps.getSession(params.id, caller).config.workspaceDir),
    }),
  );
}
