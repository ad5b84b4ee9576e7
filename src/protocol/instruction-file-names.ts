import { z } from 'zod';

/** The most fallback instruction file names a list may hold. */
export const MAX_INSTRUCTION_FALLBACK_NAMES = 16;

/**
 * Instruction file names tried in each directory of the AGENTS.md chain after AGENTS.override.md and AGENTS.md
 * (the seed's `project_doc_fallback_filenames`): plain file names, never a path, `.` or `..`.
 */
export const InstructionFileNamesSchema = z
  .array(
    z
      .string()
      .min(1)
      .max(255)
      .regex(/^[^/\\\0]+$/, 'must be a file name, not a path (no "/", "\\" or NUL)')
      .refine((name) => name !== '.' && name !== '..', 'must be a file name, not "." or ".."'),
  )
  .max(MAX_INSTRUCTION_FALLBACK_NAMES);
