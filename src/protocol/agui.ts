import { z } from 'zod';

/**
 * Wire shapes of the AG-UI adapter (`/v1/agui/...`) for openapi.yaml. AG-UI's own types and validators come
 * from `@ag-ui/core` (1.0): the routes validate RunAgentInput with its schema. These schemas document the
 * parts the adapter reads and keep every other key open, as AG-UI does.
 */

/** `:sessionId` of the AG-UI routes: the AG-UI thread is the session. */
export const AguiParamsSchema = z.object({ sessionId: z.string().min(1).max(128) }).strict();

/** The `tenantId` query (admins addressing another tenant's session), as on every session route. */
export const AguiQuerySchema = z.object({ tenantId: z.string().min(1).max(200).optional() }).strict();

/** One AG-UI message of RunAgentInput.messages (role-tagged; only the last user message is read). */
export const AguiMessageSchema = z
  .looseObject({
    id: z.string(),
    role: z.enum(['developer', 'system', 'assistant', 'user', 'tool', 'activity', 'reasoning']),
    content: z
      .union([
        z.string(),
        z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
        z.record(z.string(), z.unknown()),
      ])
      .optional(),
  })
  .meta({ id: 'AguiMessage' });

/** One answer to an interrupt: `resolved` with `payload.approved` (and `payload.reason`), or `cancelled` (a rejection). */
export const AguiResumeEntrySchema = z
  .looseObject({
    interruptId: z
      .string()
      .describe("The interrupt id from RUN_FINISHED.outcome.interrupts[].id (the pending confirmation's tool id)."),
    status: z.enum(['resolved', 'cancelled']),
    payload: z
      .looseObject({ approved: z.boolean(), reason: z.string().max(2000).optional() })
      .optional()
      .describe('Required with status "resolved".'),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'AguiResumeEntry' });

/** AG-UI RunAgentInput (protocol 1.0) as the adapter reads it. */
export const AguiRunAgentInputSchema = z
  .looseObject({
    threadId: z.string().describe('Must equal the session id of the URL.'),
    runId: z
      .string()
      .describe(
        "The client's run id: echoed as metadata.runId in every event and used as the run's Idempotency-Key (1-200 visible ASCII characters).",
      ),
    protocolVersion: z.string().optional(),
    messages: z
      .array(AguiMessageSchema)
      .describe(
        'The last message must be a user message (text content): it becomes the run input. Earlier messages are not read: the session keeps its own transcript.',
      ),
    tools: z
      .array(z.record(z.string(), z.unknown()))
      .optional()
      .describe('Not used: the agent runs its own tools on the server.'),
    context: z.array(z.record(z.string(), z.unknown())).optional().describe('Not used.'),
    state: z.unknown().optional().describe('Not used.'),
    forwardedProps: z.unknown().optional().describe('Not used.'),
    resume: z
      .array(AguiResumeEntrySchema)
      .optional()
      .describe('Answers to the interrupts of a previous stream; the stream then continues that run.'),
  })
  .meta({ id: 'AguiRunAgentInput' });

/** The body of POST /v1/agui/:sessionId/connect: empty, or a RunAgentInput whose threadId and runId are read. */
export const AguiConnectInputSchema = z
  .looseObject({ threadId: z.string().optional(), runId: z.string().optional() })
  .meta({ id: 'AguiConnectInput' });

/** One AG-UI event of the SSE stream (`data: <event>` frames); every event carries metadata.runId, metadata.a3sRunId. */
export const AguiEventSchema = z
  .looseObject({
    type: z.string().describe('RUN_STARTED, TEXT_MESSAGE_START, ..., RUN_FINISHED or RUN_ERROR'),
    timestamp: z.number().int().optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'AguiEvent' });

/** AG-UI AgentCapabilities (GET /v1/agui/capabilities). */
export const AguiCapabilitiesSchema = z
  .looseObject({
    identity: z.record(z.string(), z.unknown()).optional(),
    transport: z.record(z.string(), z.unknown()).optional(),
    tools: z.record(z.string(), z.unknown()).optional(),
    state: z.record(z.string(), z.unknown()).optional(),
    reasoning: z.record(z.string(), z.unknown()).optional(),
    execution: z.record(z.string(), z.unknown()).optional(),
    humanInTheLoop: z.record(z.string(), z.unknown()).optional(),
    custom: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'AguiCapabilities' });
