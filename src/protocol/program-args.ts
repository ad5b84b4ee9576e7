import { z } from 'zod';
import { DEFAULT_PROGRAM_LIMITS } from '../runtime/program/program-types.js';

/** Largest script, inline or from a file, in bytes. */
export const MAX_PROGRAM_SOURCE_BYTES = 256 * 1024;
/** Highest `limits.timeoutMs` a call may ask for. */
export const MAX_PROGRAM_TIMEOUT_MS = 300_000;
/** Highest `limits.maxToolCalls` a call may ask for. */
export const MAX_PROGRAM_TOOL_CALLS = 1000;
/** Highest `limits.maxOutputBytes` a call may ask for. */
export const MAX_PROGRAM_OUTPUT_BYTES = 1024 * 1024;

/** The `limits` a program call may ask for; omitted fields use their defaults. */
export const ProgramArgsLimitsSchema = z
  .object({
    timeoutMs: z
      .number()
      .int()
      .min(1)
      .max(MAX_PROGRAM_TIMEOUT_MS)
      .optional()
      .describe(`Wall-clock budget of the script in ms (default ${DEFAULT_PROGRAM_LIMITS.timeoutMs}, max ${MAX_PROGRAM_TIMEOUT_MS}).`),
    maxToolCalls: z
      .number()
      .int()
      .min(0)
      .max(MAX_PROGRAM_TOOL_CALLS)
      .optional()
      .describe(`Most tool calls the script may make (default ${DEFAULT_PROGRAM_LIMITS.maxToolCalls}, max ${MAX_PROGRAM_TOOL_CALLS}).`),
    maxOutputBytes: z
      .number()
      .int()
      .min(1024)
      .max(MAX_PROGRAM_OUTPUT_BYTES)
      .optional()
      .describe(`Bound of the console log and of the JSON result, each (default ${DEFAULT_PROGRAM_LIMITS.maxOutputBytes}).`),
  })
  .strict();

/**
 * Arguments of the `program` tool, which are also the body of POST /v1/sessions/:id/program. It is the
 * tool's own parameter schema, so it carries no id: the model sees it inline, not as a `$ref`.
 */
export const ProgramArgsSchema = z
  .object({
    type: z.literal('script').default('script').describe('Kind of program; only "script" (the default).'),
    language: z.literal('javascript').default('javascript').describe('Language of the script; only "javascript" (the default).'),
    source: z
      .string()
      .min(1)
      .max(MAX_PROGRAM_SOURCE_BYTES)
      .optional()
      .describe('The script: JavaScript defining `async function run(ctx, inputs)` that returns a JSON value. Give source or path, not both.'),
    path: z.string().min(1).optional().describe('Workspace file holding the script, instead of source.'),
    inputs: z.unknown().optional().describe('Any JSON value, passed to run() as its second argument (default null).'),
    allowed_tools: z
      .array(z.string().min(1))
      .max(64)
      .optional()
      .describe('If given, the only tools the script may call, e.g. ["read", "grep"] (ctx.readFile needs "read").'),
    limits: ProgramArgsLimitsSchema.optional().describe('Bounds of this run; omitted fields use their defaults.'),
  })
  .strict()
  .superRefine((value, ctx) => {
    if ((value.source === undefined) === (value.path === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'give exactly one of source or path', path: value.source === undefined ? ['source'] : ['path'] });
    }
  });

/**
 * The program arguments as the OpenAPI component `ProgramArgs`: ProgramArgsSchema itself, registered under
 * an id, with its "exactly one of source or path" refinement spelled out as JSON Schema.
 */
export const ProgramArgsDocSchema = ProgramArgsSchema.meta({ id: 'ProgramArgs', oneOf: [{ required: ['source'] }, { required: ['path'] }] });

/** Parsed program arguments (defaults filled in). */
export type ProgramArgs = z.infer<typeof ProgramArgsSchema>;
