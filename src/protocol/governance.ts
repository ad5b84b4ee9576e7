import { z } from 'zod';

const rules = z.array(z.string().min(1).max(1000)).max(1000);

/** PermissionPolicy (SessionOptions.permissionPolicy; CodeConfig.defaultPermissionPolicy). */
export const PermissionPolicySchema = z
  .object({
    deny: rules.default([]),
    ask: rules.default([]),
    allow: rules.default([]),
    defaultDecision: z.enum(['allow', 'ask', 'deny']).default('ask'),
    enabled: z.boolean().default(true),
  })
  .strict()
  .meta({ id: 'PermissionPolicy' });

/** A parsed permission policy. */
export type PermissionPolicy = z.infer<typeof PermissionPolicySchema>;

/** ConfirmationPolicy (SessionOptions.confirmationPolicy): human-in-the-loop settings. */
export const ConfirmationPolicySchema = z
  .object({
    enabled: z.boolean().default(false),
    defaultTimeoutMs: z.number().int().positive().max(3_600_000).default(30_000),
    timeoutAction: z.enum(['reject', 'auto_approve']).default('reject'),
  })
  .strict()
  .meta({ id: 'ConfirmationPolicy' });

/** A parsed confirmation policy. */
export type ConfirmationPolicy = z.infer<typeof ConfirmationPolicySchema>;

/** Body of POST /v1/sessions/:id/confirmations/:toolId. */
export const ConfirmationAnswerSchema = z
  .object({
    approved: z.boolean(),
    reason: z.string().max(2000).optional(),
    argsDigest: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'argsDigest must be the args_digest of confirmation_required')
      .optional(),
    always: z
      .boolean()
      .optional()
      .describe(
        'With approved: true, "allow always": approve this call and let later calls of the same tool with the same permission subject (for bash, the same parsed commands) pass without asking for the rest of the session. Without host_direct it acts as allow once where the operator\'s policy asks (see alwaysNeedsHostDirect).',
      ),
  })
  .strict()
  .meta({ id: 'ConfirmationAnswer' });

/** A pending confirmation on the wire. */
export const PendingConfirmationSchema = z
  .object({
    toolId: z.string(),
    toolName: z.string(),
    args: z.unknown(),
    argsDigest: z.string(),
    runId: z.string().nullable(),
    createdAtMs: z.number().int(),
    timeoutMs: z.number().int(),
    remainingMs: z.number().int(),
    alwaysNeedsHostDirect: z
      .boolean()
      .optional()
      .describe(
        'True when "allow always" for this call needs the host_direct scope (the operator\'s policy asks for it); without it "always" acts as allow once.',
      ),
  })
  .meta({ id: 'PendingConfirmation' });

/** A pending confirmation in wire form. */
export type PendingConfirmationView = z.infer<typeof PendingConfirmationSchema>;

/** Session id + tool call id path parameters of POST /v1/sessions/:id/confirmations/:toolId. */
export const ConfirmationParamsSchema = z
  .object({ id: z.string().min(1).max(128), toolId: z.string().min(1).max(300) })
  .strict();

/** Answer of GET /v1/sessions/:id/confirmations: the pending confirmations with their remaining time. */
export const ConfirmationListResponseSchema = z
  .object({ confirmations: z.array(PendingConfirmationSchema) })
  .meta({ id: 'ConfirmationListResponse' });

/** Answer of DELETE /v1/sessions/:id/confirmations (the seed's cancelConfirmations): how many were cancelled. */
export const ConfirmationsCancelledResponseSchema = z
  .object({ cancelled: z.number().int().nonnegative() })
  .meta({ id: 'ConfirmationsCancelledResponse' });

/** Answer of POST /v1/sessions/:id/confirmations/:toolId: the settled confirmation and the answer given. */
export const ConfirmationAnsweredResponseSchema = z
  .object({
    confirmation: PendingConfirmationSchema,
    approved: z.boolean(),
    always: z.boolean().optional().describe('True when the answer added an "allow always" grant'),
  })
  .meta({ id: 'ConfirmationAnsweredResponse' });
