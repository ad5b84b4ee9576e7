import { z } from 'zod';

/** How one file changed between a run's base and result trees (git's A, M, D, R). */
export const ChangedFileStatusSchema = z.enum(['added', 'modified', 'deleted', 'renamed']);

/** One changed file of a change set. */
export const ChangedFileSchema = z
  .object({
    path: z.string(),
    status: ChangedFileStatusSchema,
    /** The path before a rename. */
    oldPath: z.string().optional(),
    /** Lines added and removed (0 for a binary file). */
    additions: z.number().int().nonnegative(),
    deletions: z.number().int().nonnegative(),
    binary: z.boolean(),
    /** Bytes of the file in the result tree (0 when deleted). */
    bytes: z.number().int().nonnegative(),
  })
  .strict()
  .meta({ id: 'ChangedFile' });

/** Why a path is not in a change set: the server's exclusions, never the workspace's own .gitignore. */
export const NotCapturedReasonSchema = z.enum(['excluded', 'too_large']);

/** One path left out of a capture. */
export const NotCapturedSchema = z
  .object({ path: z.string(), reason: NotCapturedReasonSchema, bytes: z.number().int().nonnegative().optional() })
  .strict()
  .meta({ id: 'NotCaptured' });

/**
 * The change set of one run: the seed's `a3s.code.agent-change-set.v1` fields (format, encoding, trees, digest,
 * bytes, the base64 patch, the run's terminal state) plus ours (run_id, files, not_captured, truncated).
 */
export const ChangeSetSchema = z
  .object({
    schema: z.literal('a3s.code.agent-change-set.v1'),
    run_id: z.string(),
    /** The run's terminal status. */
    state: z.string(),
    format: z.literal('git_unified_diff_v1'),
    encoding: z.literal('base64'),
    base_tree: z.string().regex(/^git-tree:[0-9a-f]{40,64}$/),
    result_tree: z.string().regex(/^git-tree:[0-9a-f]{40,64}$/),
    /** `sha256:<hex>` of the whole patch (also when it was too large to keep). */
    patch_digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    patch_bytes: z.number().int().nonnegative(),
    /** The patch (`git diff --binary`), base64; empty when `truncated`. */
    patch_base64: z.string(),
    /** The patch was larger than the server keeps (4 MiB): `patch_base64` is empty, `files` still lists every change. */
    truncated: z.boolean(),
    files: z.array(ChangedFileSchema),
    /** Paths left out of the capture (limits.changeCaptureExclude, files over 1 MiB); capped at 1,000 entries. */
    not_captured: z.array(NotCapturedSchema),
    observed_at_ms: z.number().int().nonnegative(),
  })
  .strict()
  .meta({ id: 'ChangeSet' });

/** A run's change set. */
export type ChangeSet = z.infer<typeof ChangeSetSchema>;
/** One changed file. */
export type ChangedFile = z.infer<typeof ChangedFileSchema>;
/** One path left out. */
export type NotCaptured = z.infer<typeof NotCapturedSchema>;

/** GET /v1/sessions/:id/changes?from&to: the runs whose base and result bound the diff. */
export const ChangesRangeQuerySchema = z
  .object({
    from: z.string().min(1).max(128).describe('The run whose base tree starts the diff.'),
    to: z.string().min(1).max(128).describe('The run whose result tree ends the diff.'),
  })
  .strict();

/** GET /v1/sessions/:id/changes?from&to: the diff between two runs' trees (the change set shape, run_id the `to` run). */
export const ChangesRangeSchema = ChangeSetSchema.omit({ schema: true })
  .extend({ schema: z.literal('a3s.code.agent-change-range.v1'), from_run_id: z.string() })
  .strict()
  .meta({ id: 'ChangeRange' });

/** A range diff. */
export type ChangeRange = z.infer<typeof ChangesRangeSchema>;
