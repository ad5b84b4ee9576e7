import { z } from 'zod';

/** Metadata of a run event (snake_case wire names); identity labels ride along when set. */
export const EventMetadataSchema = z
  .object({
    run_id: z.string().optional(),
    session_id: z.string(),
    sequence: z.number().int().nonnegative().optional(),
    session_sequence: z.number().int().positive(),
    timestamp_ms: z.number().int().nonnegative(),
    tenant_id: z.string().optional(),
    principal: z.string().optional(),
    agent_template_id: z.string().optional(),
    correlation_id: z.string().optional(),
    /** The run's trace (traces on): on a traced run's agent_end. */
    trace_id: z.string().optional(),
  })
  .loose();

/** EventEnvelopeV1: `type` stays an open string so unknown types keep payload and metadata. */
export const EventEnvelopeSchema = z
  .object({
    version: z.literal(1),
    type: z.string().min(1),
    payload: z.record(z.string(), z.unknown()),
    metadata: EventMetadataSchema,
  })
  .meta({ id: 'EventEnvelopeV1' });

/** One event on the wire. */
export type EventEnvelope = z.infer<typeof EventEnvelopeSchema>;
/** Metadata of one event on the wire. */
export type EventMetadata = z.infer<typeof EventMetadataSchema>;
