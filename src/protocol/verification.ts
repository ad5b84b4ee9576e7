import { z } from 'zod';

/** Default per-check timeout (5 minutes). */
export const DEFAULT_VERIFICATION_TIMEOUT_MS = 300_000;
/** Largest per-check timeout a request may ask for (1 hour). */
export const MAX_VERIFICATION_TIMEOUT_MS = 3_600_000;
/** Most commands one verification request may carry. */
export const MAX_VERIFICATION_COMMANDS = 50;
/** Bytes of a check's output kept in its report (the end of the output). */
export const VERIFICATION_OUTPUT_TAIL_BYTES = 4096;
/** The `schema` of every report. */
export const VERIFICATION_REPORT_SCHEMA = 'a3s.verification_report.v1';

/**
 * What a check verifies. The seed keeps any string (its commands use `command`, `test`, `format`,
 * `type_check`, `lint`, ...); so do we. `command` when the caller does not say.
 */
export const VerificationKindSchema = z.string().min(1, 'kind must not be empty').max(64);

/** A check kind. */
export type VerificationKind = z.infer<typeof VerificationKindSchema>;

/** Check ids name checks in reports and texts; short, shell/URL safe, and `:` allowed (the seed's `rust:test`). */
export const VerificationCheckIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'id must be 1-64 characters of A-Z a-z 0-9 _ . : -');

// The seed's snake_case spellings of the optional command fields, accepted beside our camelCase ones.
const COMMAND_ALIASES: Readonly<Record<string, string>> = { timeout_ms: 'timeoutMs', expect_exit: 'expectExit' };

function camelCommandKeys(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [snake, camel] of Object.entries(COMMAND_ALIASES)) {
    // Both spellings at once stay as given, so the strict schema names the extra key.
    if (snake in out && !(camel in out)) {
      out[camel] = out[snake];
      delete out[snake];
    }
  }
  return out;
}

/**
 * One command of a verification request: the seed's VerificationCommand (`id, kind, description, command,
 * required` (default false, as in the seed), `timeoutMs`/`timeout_ms`, `expectExit`/`expect_exit`).
 */
export const VerificationCommandSchema = z.preprocess(
  camelCommandKeys,
  z
    .object({
      id: VerificationCheckIdSchema,
      kind: VerificationKindSchema.default('command'),
      description: z.string().max(1000).optional(),
      command: z.string().min(1, 'command must not be empty').max(10_000),
      required: z.boolean().default(false),
      timeoutMs: z.number().int().min(1).max(MAX_VERIFICATION_TIMEOUT_MS).default(DEFAULT_VERIFICATION_TIMEOUT_MS),
      expectExit: z.number().int().min(0).max(255).default(0),
    })
    .strict(),
);

/** A parsed verification command (defaults applied). */
export type VerificationCommand = z.infer<typeof VerificationCommandSchema>;

/** Body of POST /v1/sessions/:id/verifications (the seed's `verifyCommands(subject, commands)`): 1-50 commands with unique ids, run in order. */
export const VerificationRequestSchema = z
  .object({
    subject: z.string().min(1, 'subject must not be empty').max(500),
    commands: z
      .array(VerificationCommandSchema)
      .min(1, 'commands must hold at least one command')
      .max(MAX_VERIFICATION_COMMANDS),
  })
  .strict()
  .superRefine((request, ctx) => {
    const firstIndex = new Map<string, number>();
    request.commands.forEach((command, index) => {
      const seen = firstIndex.get(command.id);
      if (seen === undefined) firstIndex.set(command.id, index);
      else
        ctx.addIssue({
          code: 'custom',
          path: ['commands', index, 'id'],
          message: `duplicate id "${command.id}" (already used by commands.${seen}.id)`,
        });
    });
  })
  .meta({ id: 'VerificationRequest' });

/** A parsed verification request. */
export type VerificationRequest = z.infer<typeof VerificationRequestSchema>;

/** What a verification request looks like before defaults are applied (what callers write). */
export type VerificationRequestInput = z.input<typeof VerificationRequestSchema>;

/** The seed's VerificationStatus, of checks, reports and summaries alike. */
export const VerificationStatusSchema = z.enum(['passed', 'failed', 'needs_review', 'skipped']);

/** A check, report or summary verdict. */
export type VerificationStatus = z.infer<typeof VerificationStatusSchema>;

/**
 * One check of a report: the seed's VerificationCheck `{id, kind, description, status, required,
 * suggested_tools?, evidence_uris?, residual_risk?}`, plus what ran (`command`, `expect_exit`,
 * `exit_code`, `timed_out`, `duration_ms`, `output_tail`). A command check passes iff it ran and exited
 * with `expect_exit`; otherwise it failed and `residual_risk` says why; `skipped` means it never started.
 */
export const VerificationCheckSchema = z
  .object({
    id: z.string(),
    kind: z.string(),
    description: z.string(),
    status: VerificationStatusSchema,
    required: z.boolean(),
    suggested_tools: z.array(z.string()).optional(),
    evidence_uris: z.array(z.string()).optional(),
    residual_risk: z.string().optional(),
    command: z.string(),
    expect_exit: z.number().int(),
    /** Null when the check did not run. A timed-out check carries the status its killed shell reported. */
    exit_code: z.number().int().nullable(),
    timed_out: z.boolean(),
    duration_ms: z.number().int().nonnegative(),
    /** The last ~4 KiB of the command's combined stdout/stderr (prefixed with a marker when cut). */
    output_tail: z.string(),
  })
  .meta({ id: 'VerificationCheck' });

/** One check of a report. */
export type VerificationCheck = z.infer<typeof VerificationCheckSchema>;

/** Check counts of a report (ours, beside the seed's fields). */
export const VerificationCountsSchema = z.object({
  total: z.number().int().nonnegative(),
  passed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
  required_failed: z.number().int().nonnegative(),
});

/** Check counts of a report. */
export type VerificationCounts = z.infer<typeof VerificationCountsSchema>;

/**
 * A verification report: the seed's `{schema, subject, status, checks, residual_risks?, effect_digest?}`
 * plus our `id, session_id, run_id, created_at_ms, duration_ms, summary`. Status (the seed's rule): any
 * failed check -> failed; a required check needs_review/skipped, or a report residual risk -> needs_review;
 * no checks -> skipped; else passed.
 */
export const VerificationReportSchema = z
  .object({
    schema: z.literal(VERIFICATION_REPORT_SCHEMA),
    subject: z.string(),
    status: VerificationStatusSchema,
    checks: z.array(VerificationCheckSchema),
    /** Risks of the report as a whole (each check's own risk is its `residual_risk`). */
    residual_risks: z.array(z.string()).optional(),
    effect_digest: z.string().optional(),
    id: z.string(),
    session_id: z.string(),
    run_id: z.string().nullable(),
    created_at_ms: z.number().int().nonnegative(),
    duration_ms: z.number().int().nonnegative(),
    summary: VerificationCountsSchema,
  })
  .meta({ id: 'VerificationReport' });

/** A verification report. */
export type VerificationReport = z.infer<typeof VerificationReportSchema>;

// Written by servers before the seed's shapes: check statuses passed|failed|skipped|timed_out and a
// `residual_risks` array per check; report `residual_risks` repeating every check's risks plus this one.
const LEGACY_NO_TEST_RISK = 'no test command ran';

function upgradeCheck(check: unknown): unknown {
  if (check === null || typeof check !== 'object' || !('residual_risks' in check)) return check;
  const { residual_risks: risks, status, ...rest } = check as Record<string, unknown> & { residual_risks: unknown };
  const list = Array.isArray(risks) ? risks.filter((r): r is string => typeof r === 'string') : [];
  return {
    ...rest,
    status: status === 'timed_out' ? 'failed' : status,
    timed_out: status === 'timed_out',
    suggested_tools: ['bash'],
    ...(list.length > 0 ? { residual_risk: list.join('; ') } : {}),
  };
}

function upgradeReport(report: unknown): unknown {
  if (report === null || typeof report !== 'object' || !Array.isArray((report as { checks?: unknown }).checks))
    return report;
  const old = report as Record<string, unknown> & { checks: unknown[] };
  if (!old.checks.some((c) => c !== null && typeof c === 'object' && 'residual_risks' in c)) return report;
  const checkRisks = new Set(
    old.checks.flatMap((c) => ((c as { residual_risks?: unknown }).residual_risks as string[] | undefined) ?? []),
  );
  const reportRisks = Array.isArray(old.residual_risks) ? (old.residual_risks as unknown[]) : [];
  return {
    ...old,
    checks: old.checks.map(upgradeCheck),
    residual_risks: reportRisks.filter((r) => typeof r === 'string' && r !== LEGACY_NO_TEST_RISK && !checkRisks.has(r)),
  };
}

/** A report as stored in a snapshot: reports written by older servers are migrated to the current shape on read. */
export const StoredVerificationReportSchema = z.preprocess(upgradeReport, VerificationReportSchema);

/** One command of a preset: the seed's VerificationCommand in its snake_case stored form. */
export const VerificationPresetCommandSchema = z.object({
  id: z.string(),
  kind: z.string(),
  description: z.string(),
  command: z.string(),
  required: z.boolean(),
  expect_exit: z.number().int(),
});

/** A preset command. */
export type VerificationPresetCommand = z.infer<typeof VerificationPresetCommandSchema>;

/** The seed's VerificationPreset `{id, project_kind, description, commands}`, detected from the workspace's files. */
export const VerificationPresetSchema = z
  .object({
    id: z.string(),
    project_kind: z.string(),
    description: z.string(),
    commands: z.array(VerificationPresetCommandSchema),
  })
  .meta({ id: 'VerificationPreset' });

/** A detected verification preset. */
export type VerificationPreset = z.infer<typeof VerificationPresetSchema>;

/** Answer of GET /v1/sessions/:id/verifications (oldest first). */
export const VerificationReportListResponseSchema = z.object({ reports: z.array(VerificationReportSchema) });

const shortText = z.string().max(2_000);

/** One check of an externally produced report: the seed's check fields; the command fields are ours, optional. */
export const ExternalVerificationCheckSchema = z
  .object({
    id: z.string().min(1).max(200),
    kind: z.string().min(1).max(200),
    description: shortText,
    status: VerificationStatusSchema,
    required: z.boolean(),
    suggested_tools: z.array(z.string().max(200)).max(32).optional(),
    evidence_uris: z.array(z.string().max(2_000)).max(32).optional(),
    residual_risk: shortText.optional(),
    command: z.string().max(8_000).optional(),
    expect_exit: z.number().int().optional(),
    exit_code: z.number().int().nullable().optional(),
    timed_out: z.boolean().optional(),
    duration_ms: z.number().int().nonnegative().optional(),
    output_tail: z.string().max(8_192).optional(),
  })
  .strict();

/** A report the host produced elsewhere (the seed's VerificationReport fields); the server adds id, times and counts. */
export const ExternalVerificationReportSchema = z
  .object({
    schema: z.literal(VERIFICATION_REPORT_SCHEMA).optional(),
    subject: z.string().min(1, 'subject must not be empty').max(500),
    status: VerificationStatusSchema,
    checks: z.array(ExternalVerificationCheckSchema).max(100),
    residual_risks: z.array(shortText).max(32).optional(),
    effect_digest: z.string().max(200).optional(),
  })
  .strict();

/** Body of POST /v1/sessions/:id/verifications/reports (the seed's recordVerificationReports). */
export const RecordVerificationReportsBodySchema = z
  .object({ reports: z.array(ExternalVerificationReportSchema).min(1, 'reports must not be empty').max(20) })
  .strict()
  .meta({ id: 'RecordVerificationReportsBody' });

/** An externally produced report as the host sends it. */
export type ExternalVerificationReport = z.infer<typeof ExternalVerificationReportSchema>;

/** Answer of GET /v1/sessions/:id/verifications/presets. */
export const VerificationPresetListResponseSchema = z.object({ presets: z.array(VerificationPresetSchema) });
