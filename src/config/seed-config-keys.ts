import { z } from 'zod';
import { InstructionFileNamesSchema } from '../protocol/instruction-file-names.js';

// Top-level keys of the seed's ACL (A3S Code `CodeConfig::from_acl`) that this server accepts so a seed
// config file loads unchanged. Free-form blocks are kept as written (keys camelCased); the ones the
// server does not act on yet are named in a startup warning (see configWarnings), never fatal.

const freeBlock = z.record(z.string(), z.unknown());

/** Zod fields for the seed's top-level ACL keys beyond those CodeConfig already models. */
export const SeedConfigFields = {
  /** Directory of the default file-backed memory store (seed: `memory_dir`). */
  memoryDir: z.string().min(1).optional(),
  /** The seed's memory tuning block (`memory { max_short_term, relevance {}, prune {} }`). */
  memory: freeBlock.optional(),
  /** The seed's connection URL for a custom storage backend; this server uses `redis_url` / REDIS_URL. */
  storageUrl: z.string().min(1).optional(),
  /** Agent-wide task admission (`task_scheduler { max_active, aging_interval_ms }`). */
  taskScheduler: freeBlock.optional(),
  /** Search configuration (`search { headless { backend, auto_download_moli, max_tabs } }`). */
  search: freeBlock.optional(),
  /** Document context extraction (`document_parser {}`). */
  documentParser: freeBlock.optional(),
  /** Directory of the operator's personal instructions (AGENTS.override.md, else AGENTS.md), read before each chain; none when unset. */
  userInstructionsDir: z.string().min(1).optional(),
  /** Combined AGENTS.md budget in bytes (seed default 32 KiB, max 1 MiB, 0 disables). */
  projectDocMaxBytes: z
    .number()
    .int()
    .min(0)
    .max(1_048_576, 'project_doc_max_bytes is at most 1048576 (1 MiB)')
    .optional(),
  /** Instruction file names tried after AGENTS.override.md and AGENTS.md in each directory. */
  projectDocFallbackFilenames: InstructionFileNamesSchema.optional(),
  /** A session's parallel_task children running at once: the default of SessionOptions.maxParallelTasks (seed 8). */
  maxParallelTasks: z
    .number()
    .int()
    .min(1)
    .max(32, 'max_parallel_tasks is at most 32 (a parallel_task has at most 32 tasks)')
    .optional(),
  /** Global switch for automatic parallel child-agent fan-out. */
  autoParallel: z.boolean().optional(),
  /** Automatic delegation (`auto_delegation { enabled, auto_parallel, min_confidence, max_tasks }`). */
  autoDelegation: freeBlock.optional(),
  /** Thinking/reasoning budget in tokens. */
  thinkingBudget: z.number().int().nonnegative().optional(),
  /** Provider HTTP timeout in ms; the default `timeout_ms` of every provider that sets none. */
  llmApiTimeoutMs: z.number().int().positive().optional(),
  /** Platform endpoint for account login (`os { address }`). */
  os: freeBlock.optional(),
};

/** Alternative spellings the seed accepts for top-level keys, after camelCasing, mapped to our field. */
export const SEED_ROOT_ALIASES: Readonly<Record<string, string>> = {
  skills: 'skillDirs',
  mcpServer: 'mcpServers',
  apiTimeoutMs: 'llmApiTimeoutMs',
  modelApiTimeoutMs: 'llmApiTimeoutMs',
  globalInstructionsDir: 'userInstructionsDir',
  autoParallelEnabled: 'autoParallel',
  apiToken: 'apiTokens',
};

/**
 * Seed keys the server accepts but does not act on yet, as `[field, seed spelling]`. Whoever wires one
 * up removes it here, and its startup warning goes away.
 */
export const UNUSED_SEED_KEYS: readonly (readonly [string, string])[] = [
  ['memoryDir', 'memory_dir'],
  ['memory', 'memory'],
  ['storageUrl', 'storage_url'],
  ['taskScheduler', 'task_scheduler'],
  ['search', 'search'],
  ['documentParser', 'document_parser'],
  ['autoParallel', 'auto_parallel'],
  ['autoDelegation', 'auto_delegation'],
  ['thinkingBudget', 'thinking_budget'],
  ['os', 'os'],
  ['queue', 'queue'],
];
