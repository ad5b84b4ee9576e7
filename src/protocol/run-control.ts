import { z } from 'zod';

/** Body of POST /v1/sessions/:id/runs/:runId/steer (the seed's steer(input, {requestId, ...})). */
export const SteerBodySchema = z
  .object({
    input: z.string().min(1),
    /** Makes the request idempotent: the same id again answers the same receipt and applies nothing twice. */
    requestId: z.string().min(1).max(200),
    /** Apply only while this is still the run's next turn (`runControlSnapshot().turnId`); else rejected. */
    expectedTurnId: z.string().min(1).max(300).optional(),
    /** Apply only while the next turn has this revision (steers accepted for it so far); else rejected. */
    expectedTurnRevision: z.number().int().nonnegative().optional(),
    /** Apply only within this many ms of the request; a safe point later than that rejects it. */
    deadlineMs: z.number().int().positive().max(86_400_000).optional(),
  })
  .strict()
  .meta({ id: 'SteerBody' });

/** A steer request's body. */
export type SteerBody = z.infer<typeof SteerBodySchema>;

/** Body of POST /v1/sessions/:id/runs/:runId/interrupt (the seed's interrupt({reason, force})). */
export const InterruptBodySchema = z
  .object({
    reason: z.string().min(1).max(2000).optional(),
    /** Stop now, like a cancel, instead of at the next safe point. */
    force: z.boolean().optional(),
    requestId: z.string().min(1).max(200).optional(),
  })
  .strict()
  .meta({ id: 'InterruptBody' });

/** An interrupt request's body. */
export type InterruptBody = z.infer<typeof InterruptBodySchema>;

/**
 * What became of a steer or interrupt (the seed's receipts): `accepted` (queued for the next safe point),
 * `applied` (done at a safe point), `settled` (the run ended first, so it was never applied) or `rejected`
 * (refused, `reason` says why: a stale turn id or revision, a passed deadline).
 */
export const RunControlReceiptSchema = z
  .object({
    requestId: z.string(),
    operation: z.enum(['steer', 'interrupt']),
    status: z.enum(['accepted', 'applied', 'settled', 'rejected']),
    reason: z.string().optional(),
    /** The turn it was (or would have been) applied before, and that turn's revision after it. */
    turnId: z.string().optional(),
    turnRevision: z.number().int().optional(),
  })
  .strict()
  .meta({ id: 'RunControlReceipt' });

/** A run control receipt. */
export type RunControlReceipt = z.infer<typeof RunControlReceiptSchema>;

/** Answer of GET .../runs/:runId/control (the seed's runControlSnapshot()). */
export const RunControlSnapshotSchema = z
  .object({
    runId: z.string(),
    active: z.boolean(),
    /**
     * The turn the next safe point comes before (`<runId>:<turn>`, turns counting provider calls from 1) and its
     * revision: the steers accepted for it so far (0 once a turn starts).
     */
    turnId: z.string(),
    turnRevision: z.number().int().nonnegative(),
    /** Requests still waiting for a safe point. */
    pending: z.array(RunControlReceiptSchema),
  })
  .strict()
  .meta({ id: 'RunControlSnapshot' });

/** A run's control snapshot. */
export type RunControlSnapshot = z.infer<typeof RunControlSnapshotSchema>;
