import { z } from 'zod';

/** Server-wide defaults for session loop limits (SessionOptions override them). */
export const LoopDefaultsSchema = z
  .object({
    maxToolRounds: z.number().int().positive().default(50),
    maxParseRetries: z.number().int().nonnegative().default(2),
    toolTimeoutMs: z.number().int().positive().default(120_000),
    circuitBreakerThreshold: z.number().int().positive().default(3),
    duplicateToolCallThreshold: z.number().int().positive().default(3),
    continuationEnabled: z.boolean().default(true),
    maxContinuationTurns: z.number().int().nonnegative().default(3),
    maxExecutionTimeMs: z.number().int().positive().default(1_800_000),
  })
  .strict();
