import { z } from 'zod';

/** Messages a WebSocket client may send. */
export const WsClientMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auth'), token: z.string().min(1) }).strict(),
  z.object({ type: z.literal('ping') }).strict(),
  z.object({ type: z.literal('confirm'), toolId: z.string().min(1), approved: z.boolean(), reason: z.string().optional() }).strict(),
  z.object({ type: z.literal('cancel'), runId: z.string().min(1) }).strict(),
]);

/** A client WebSocket message. */
export type WsClientMessage = z.infer<typeof WsClientMessageSchema>;

/** Query of the WebSocket subscription. */
export const WsQuerySchema = z.object({ after: z.coerce.number().int().min(0).optional() }).strict();

/** Close codes the server uses. */
export const WS_CLOSE = {
  normal: 1000,
  goingAway: 1001,
  policy: 1008,
  slowConsumer: 4008,
  unauthorized: 4001,
  notFound: 4004,
  sessionClosed: 4010,
} as const;
