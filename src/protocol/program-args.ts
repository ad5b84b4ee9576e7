import { z } from 'zod';
import { DEFAULT_PROGRAM_LIMITS, DELEGATING_PROGRAM_TIMEOUT_MS } from './program-limits.js';

/** Largest script, inline or from a file, in bytes (the seed's 192 KiB). */
export const MAX_PROGRAM_SOURCE_BYTES = 192 * 1024;
/** Highest `limits.timeoutMs` a call may ask for. */
export const MAX_PROGRAM_TIMEOUT_MS = 600_000;
/** Highest `limits.maxToolCalls` a call may ask for. */
export const MAX_PROGRAM_TOOL_CALLS = 1000;
/** Highest `limits.maxOutputBytes` a call may ask for. */
export const MAX_PROGRAM_OUTPUT_BYTES = 1024 * 1024;
/** Most names `allowed_tools` may list. */
const MAX_ALLOWED_TOOLS = 64;

/** The `limits` a program call may ask for (camelCase, as in the seed); omitted fields use their defaults. */
export const ProgramArgsLimitsSchema = z
  .object({
    timeoutMs: z
      .number()
      .int()
      .min(1)
      .max(MAX_PROGRAM_TIMEOUT_MS)
      .optional()
      .describe(
        `Wall-clock budget of the script in ms (default ${DEFAULT_PROGRAM_LIMITS.timeoutMs}, ${DELEGATING_PROGRAM_TIMEOUT_MS} when task is allowed; max ${MAX_PROGRAM_TIMEOUT_MS}).`,
      ),
    maxToolCalls: z
      .number()
      .int()
      .min(0)
      .max(MAX_PROGRAM_TOOL_CALLS)
      .optional()
      .describe(
        `Most tool calls the script may make (default ${DEFAULT_PROGRAM_LIMITS.maxToolCalls}, max ${MAX_PROGRAM_TOOL_CALLS}).`,
      ),
    maxOutputBytes: z
      .number()
      .int()
      .min(1)
      .max(MAX_PROGRAM_OUTPUT_BYTES)
      .optional()
      .describe(
        `Bytes of each tool output returned to the script; also bounds the console log and the JSON result (default ${DEFAULT_PROGRAM_LIMITS.maxOutputBytes}).`,
      ),
  })
  .strict();

const sourceField = z
  .string()
  .min(1)
  .max(MAX_PROGRAM_SOURCE_BYTES)
  .optional()
  .describe(
    'Inline JavaScript defining `async function run(ctx, inputs)` (or `export default async function run`) that returns a JSON value. Give source or path, not both.',
  );
const pathField = z
  .string()
  .min(1)
  .optional()
  .describe('Workspace-relative path of a .js or .mjs script defining run(ctx, inputs), instead of source.');
const inputsField = z.unknown().optional().describe('JSON inputs passed to run() as its second argument (default {}).');
const allowedToolsField = z
  .array(z.string().min(1))
  .max(MAX_ALLOWED_TOOLS)
  .optional()
  .describe(
    'Tool names the script may call through ctx (ctx.readFile needs "read"). Default: every registered tool except program, dynamic_workflow and parallel_task.',
  );

function exactlyOneSource(value: { source?: string; path?: string }, ctx: z.RefinementCtx): void {
  if ((value.source === undefined) === (value.path === undefined)) {
    ctx.addIssue({
      code: 'custom',
      message: 'give exactly one of source or path',
      path: value.source === undefined ? ['source'] : ['path'],
    });
  }
}

/**
 * Arguments of the `program` tool, in the seed's tool schema: `type` is required (only "script"),
 * `allowed_tools` is snake_case, `limits` camelCase. It is the tool's own parameter schema, so it carries
 * no id: the model sees it inline, not as a `$ref`.
 */
export const ProgramArgsSchema = z
  .object({
    type: z.literal('script').describe('Required. Program kind; only "script" is supported.'),
    language: z
      .literal('javascript')
      .default('javascript')
      .describe('Script language; only "javascript" (the default).'),
    source: sourceField,
    path: pathField,
    inputs: inputsField,
    allowed_tools: allowedToolsField,
    limits: ProgramArgsLimitsSchema.optional().describe(
      'Optional timeoutMs, maxToolCalls and maxOutputBytes; omitted fields use their defaults.',
    ),
  })
  .strict()
  .superRefine(exactlyOneSource);

/** Parsed program arguments (defaults filled in). */
export type ProgramArgs = z.infer<typeof ProgramArgsSchema>;

/** Program arguments as a caller writes them (before defaults). */
export type ProgramArgsInput = z.input<typeof ProgramArgsSchema>;

/**
 * Body of POST /v1/sessions/:id/program: the seed SDK's `session.program({source | path, inputs,
 * allowedTools, limits})`. `type` and `language` are optional here (the host adds `type: "script"`, as the
 * SDK does), and the tool's snake_case `allowed_tools` is accepted too, but not both spellings at once.
 */
export const ProgramBodySchema = z
  .object({
    type: z.literal('script').optional().describe('Program kind; only "script" (the default).'),
    language: z.literal('javascript').optional().describe('Script language; only "javascript" (the default).'),
    source: sourceField,
    path: pathField,
    inputs: inputsField,
    allowedTools: allowedToolsField,
    allowed_tools: allowedToolsField,
    limits: ProgramArgsLimitsSchema.optional().describe(
      'Optional timeoutMs, maxToolCalls and maxOutputBytes; omitted fields use their defaults.',
    ),
  })
  .strict()
  .superRefine((value, ctx) => {
    exactlyOneSource(value, ctx);
    if (value.allowedTools !== undefined && value.allowed_tools !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: 'give allowedTools or allowed_tools, not both',
        path: ['allowed_tools'],
      });
    }
  })
  .meta({ id: 'ProgramBody' });

/** A parsed program body. */
export type ProgramBody = z.infer<typeof ProgramBodySchema>;

/** The program tool's arguments for a host-direct program body (`type: "script"` added, `allowedTools` renamed). */
export function programBodyToArgs(body: ProgramBody): ProgramArgsInput {
  const allowed = body.allowedTools ?? body.allowed_tools;
  return {
    type: 'script',
    language: body.language ?? 'javascript',
    ...(body.source !== undefined ? { source: body.source } : {}),
    ...(body.path !== undefined ? { path: body.path } : {}),
    ...(body.inputs !== undefined ? { inputs: body.inputs } : {}),
    ...(allowed !== undefined ? { allowed_tools: allowed } : {}),
    ...(body.limits !== undefined ? { limits: body.limits } : {}),
  };
}
