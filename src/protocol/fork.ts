import { z } from 'zod';

/** Where a fork came from: SessionInfo.forkedFrom, kept in the fork's snapshot. */
export const ForkOriginSchema = z
  .object({
    /** The session it was forked from. */
    sessionId: z.string(),
    /** That session's tenant, when it is not the fork's (an admin forked another tenant's session). */
    tenantId: z.string().optional(),
    /** The run the fork was taken just before (absent: forked at a message index, or whole). */
    atRunId: z.string().optional(),
    /** How many of the parent's messages the fork started with (its transcript is the parent's [0, atMessage)). */
    atMessage: z.number().int().nonnegative(),
    /** `copy`: the fork's workspace is a copy of the parent's files at the fork point (absent: the parent's, shared). */
    workspace: z.literal('copy').optional(),
    /** The copy's tree in the parent's shadow store (`git-tree:<id>`), with `workspace: "copy"`. */
    tree: z.string().optional(),
  })
  .strict()
  .meta({ id: 'ForkOrigin' });

/** Where a fork came from. */
export type ForkOrigin = z.infer<typeof ForkOriginSchema>;

/** Body of POST /v1/sessions/:id/fork. */
export const ForkRequestSchema = z
  .object({
    /** Fork from just before this run: the transcript as it was when the run started. */
    atRunId: z.string().min(1).max(128).optional(),
    /** Keep the parent's messages [0, atMessage) (indexes of GET .../history). */
    atMessage: z.number().int().nonnegative().max(10_000_000).optional(),
    /** The fork's id (generated when absent); 409 SESSION_EXISTS when the caller's tenant has one. */
    sessionId: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/,
        'sessionId must be 1-128 characters of letters, digits, "_", "." or "-"',
      )
      .optional(),
    /**
     * `shared` (default): the parent's workspace; `copy`: a new directory in the forking caller's tenant root holding
     * the parent's files as captured at the fork point (docs/fork.md).
     */
    workspace: z.enum(['shared', 'copy']).optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.atRunId === undefined || body.atMessage === undefined) return;
    for (const path of ['atRunId', 'atMessage'])
      ctx.addIssue({ code: 'custom', path: [path], message: 'give atRunId or atMessage, not both' });
  })
  .meta({ id: 'ForkRequest' });

/** Body of POST /v1/sessions/:id/fork. */
export type ForkRequest = z.infer<typeof ForkRequestSchema>;
