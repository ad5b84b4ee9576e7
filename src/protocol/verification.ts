import { z } from 'zod';

/** Default per-check timeout (5 minutes). */
export const DEFAULT_VERIFICATION_TIMEOUT_MS = 300_000;
/** Largest per-check timeout a request may ask for (1 hour). */
export const MAX_VERIFICATION_TIMEOUT_MS = 3_600_000;
/** Most commands one verification request may carry. */
export const MAX_VERIFICATION_COMMANDS = 50;
/** Bytes of a check's output kept in its report (the end of the output). */
export const VERIFICATION_OUTPUT_TAIL_BYTES = 4096;

/** What a check verifies; `custom` when the caller does not say. */
export const VerificationKindSchema = z.enum(['test', 'build', 'lint', 'typecheck', 'format', 'custom']);

/** A check kind. */
export type VerificationKind = z.infer<typeof VerificationKindSchema>;

/** Check ids name checks in reports and texts; they are short and shell/URL safe. */
export const VerificationCheckIdSchema = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'id must be 1-64 characters of A-Z a-z 0-9 _ . -');

/** One command of a verification request (camelCase, like every HTTP body). */
export const VerificationCommandSchema = z
  .object({
    id: VerificationCheckIdSchema,
    kind: VerificationKindSchema.default('custom'),
    description: z.string().max(1000).optional(),
    command: z.string().min(1, 'command must not be empty').max(10_000),
    required: z.boolean().default(true),
    timeoutMs: z.number().int().min(1).max(MAX_VERIFICATION_TIMEOUT_MS).default(DEFAULT_VERIFICATION_TIMEOUT_MS),
    expectExit: z.number().int().min(0).max(255).default(0),
  })
  .strict();

/** A parsed verification command (defaults applied). */
export type VerificationCommand = z.infer<typeof VerificationCommandSchema>;

/** Body of POST /v1/sessions/:id/verifications: a subject and 1-50 commands with unique ids, run in order. */
export const VerificationRequestSchema = z
  .object({
    subject: z.string().min(1, 'subject must not be empty').max(500),
    commands: z.array(VerificationCommandSchema).min(1, 'commands must hold at least one command').max(MAX_VERIFICATION_COMMANDS),
  })
  .strict()
  .superRefine((request, ctx) => {
    const firstIndex = new Map<string, number>();
    request.commands.forEach((command, index) => {
      const seen = firstIndex.get(command.id);
      if (seen === undefined) firstIndex.set(command.id, index);
      else ctx.addIssue({ code: 'custom', path: ['commands', index, 'id'], message: `duplicate id "${command.id}" (already used by commands.${seen}.id)` });
    });
  })
  .meta({ id: 'VerificationRequest' });

/** A parsed verification request. */
export type VerificationRequest = z.infer<typeof VerificationRequestSchema>;

/** What a verification request looks like before defaults are applied (what callers write). */
export type VerificationRequestInput = z.input<typeof VerificationRequestSchema>;

/**
 * Overall verdict of a report:
 * - `failed`: a required check failed or timed out;
 * - `needs_review`: every required check that ran passed, but an optional check failed or timed out,
 *   or a required check was skipped (the verification was cancelled before it ran);
 * - `skipped`: no check ran at all;
 * - `passed`: every check ran and met its expected exit status.
 */
export const VerificationStatusSchema = z.enum(['passed', 'failed', 'needs_review', 'skipped']);

/** A report (or summary) verdict. */
export type VerificationStatus = z.infer<typeof VerificationStatusSchema>;

/** Outcome of one check; `skipped` means it never started (the verification was cancelled first). */
export const VerificationCheckStatusSchema = z.enum(['passed', 'failed', 'skipped', 'timed_out']);

/** A check outcome. */
export type VerificationCheckStatus = z.infer<typeof VerificationCheckStatusSchema>;

/** One check of a report (snake_case, like the seed's report). */
export const VerificationCheckSchema = z
  .object({
    id: z.string(),
    kind: VerificationKindSchema,
    description: z.string(),
    command: z.string(),
    required: z.boolean(),
    expect_exit: z.number().int(),
    /** Null when the check did not run. A timed-out check carries the status its killed shell reported. */
    exit_code: z.number().int().nullable(),
    status: VerificationCheckStatusSchema,
    duration_ms: z.number().int().nonnegative(),
    /** The last ~4 KiB of the command's combined stdout/stderr (prefixed with a marker when cut). */
    output_tail: z.string(),
    residual_risks: z.array(z.string()),
  })
  .meta({ id: 'VerificationCheck' });

/** One check of a report. */
export type VerificationCheck = z.infer<typeof VerificationCheckSchema>;

/** Check counts of a report; `failed` counts failed and timed-out checks. */
export const VerificationCountsSchema = z.object({
  total: z.number().int().nonnegative(),
  passed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
  required_failed: z.number().int().nonnegative(),
});

/** Check counts of a report. */
export type VerificationCounts = z.infer<typeof VerificationCountsSchema>;

/** A verification report: the checks of one request, in order, and one verdict. */
export const VerificationReportSchema = z
  .object({
    schema: z.literal('a3s.verification_report.v1'),
    id: z.string(),
    session_id: z.string(),
    run_id: z.string().nullable(),
    subject: z.string(),
    status: VerificationStatusSchema,
    created_at_ms: z.number().int().nonnegative(),
    duration_ms: z.number().int().nonnegative(),
    checks: z.array(VerificationCheckSchema),
    /** Every check's residual risks, then the report-level ones (e.g. "no test command ran"). */
    residual_risks: z.array(z.string()),
    summary: VerificationCountsSchema,
  })
  .meta({ id: 'VerificationReport' });

/** A verification report. */
export type VerificationReport = z.infer<typeof VerificationReportSchema>;

/** One subject's latest report, compacted, inside `verificationSummaryJson`. */
export const VerificationSubjectSummarySchema = z.object({
  subject: z.string(),
  report_id: z.string(),
  run_id: z.string().nullable(),
  status: VerificationStatusSchema,
  created_at_ms: z.number().int().nonnegative(),
  summary: VerificationCountsSchema,
  /** Checks that failed or timed out, required or not. */
  failed_checks: z.array(
    z.object({
      id: z.string(),
      kind: VerificationKindSchema,
      command: z.string(),
      required: z.boolean(),
      status: VerificationCheckStatusSchema,
      exit_code: z.number().int().nullable(),
      expect_exit: z.number().int(),
    }),
  ),
});

/** What `verificationSummaryJson` holds (parse it with this schema). */
export const VerificationSummaryJsonSchema = z
  .object({
    schema: z.literal('a3s.verification_summary.v1'),
    status: VerificationStatusSchema,
    report_count: z.number().int().nonnegative(),
    pending_count: z.number().int().nonnegative(),
    failed_count: z.number().int().nonnegative(),
    subjects: z.array(VerificationSubjectSummarySchema),
    residual_risks: z.array(z.string()),
  })
  .meta({ id: 'VerificationSummaryJson' });

/** The compact summary serialised into `verificationSummaryJson`. */
export type VerificationSummaryJson = z.infer<typeof VerificationSummaryJsonSchema>;

/** A session's verification summary, with exactly the AgentResult field names (GET .../verifications/summary). */
export const VerificationSummarySchema = z
  .object({
    verificationStatus: VerificationStatusSchema,
    pendingVerificationCount: z.number().int().nonnegative(),
    failedVerificationCount: z.number().int().nonnegative(),
    verificationReportCount: z.number().int().nonnegative(),
    verificationSummaryJson: z.string(),
    verificationSummaryText: z.string(),
  })
  .meta({ id: 'VerificationSummary' });

/** A verification summary. */
export type VerificationSummary = z.infer<typeof VerificationSummarySchema>;

/** Where a preset was detected. */
export const VerificationPresetSourceSchema = z.enum(['package.json', 'Cargo.toml', 'pyproject.toml', 'go.mod']);

/** A verification command detected from the workspace's manifest files; its id is a valid check id. */
export const VerificationPresetSchema = z
  .object({
    id: z.string(),
    kind: VerificationKindSchema,
    description: z.string(),
    command: z.string(),
    source: VerificationPresetSourceSchema,
  })
  .meta({ id: 'VerificationPreset' });

/** A detected verification preset. */
export type VerificationPreset = z.infer<typeof VerificationPresetSchema>;

/** Answer of GET /v1/sessions/:id/verifications (oldest first). */
export const VerificationReportListResponseSchema = z.object({ reports: z.array(VerificationReportSchema) });

/** Answer of GET /v1/sessions/:id/verifications/presets. */
export const VerificationPresetListResponseSchema = z.object({ presets: z.array(VerificationPresetSchema) });
