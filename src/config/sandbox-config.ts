import { z } from 'zod';
import { lexicalHostProcProblem } from '../runtime/sandbox/host-proc-guard.js';

/**
 * The `sandbox` block: how model-chosen commands (bash, git, a session's stdio MCP servers) are contained.
 * `mode`: `required` refuses to start without a working bubblewrap and its fresh /proc (default when API tokens are configured;
 * with `cgroups`, below, also without a writable cgroup), `auto` (default
 * otherwise) runs commands unsandboxed when bubblewrap does not work, and then only for sessions created
 * with host_direct. `hostDirect`: `none` runs host-direct calls unsandboxed. `network`: `allowed` shares
 * the host's network (loopback services included) with every contained command. Limits are per command.
 */
export const SandboxConfigSchema = z
  .object({
    mode: z.enum(['required', 'auto']).optional(),
    hostDirect: z.enum(['sandbox', 'none']).default('sandbox'),
    network: z.enum(['none', 'allowed']).default('none'),
    pidsMax: z.number().int().min(8).max(1_000_000).default(512),
    memoryMb: z.number().int().min(16).max(1_048_576).default(4096),
    cpuSeconds: z.number().int().min(1).max(86_400).default(900),
    addressSpaceMb: z.number().int().min(64).max(16_777_216).default(16_384),
    /** Host paths mounted read-only at the same place in every sandbox (a toolchain outside /usr, e.g. /opt/node). */
    readOnlyPaths: z
      .array(
        z
          .string()
          .regex(/^\//, 'sandbox.read_only_paths entries must be absolute paths')
          .refine((where) => lexicalHostProcProblem(where) === undefined, {
            error: (issue) => lexicalHostProcProblem(String(issue.input)) ?? 'refused',
          }),
      )
      .max(64)
      .default([]),
    /**
     * The user contained commands run as when the server runs as root (a user name or a numeric uid; default the
     * dedicated `a3s-sandbox` user scripts/install-test-deps.sh creates). Never root. Ignored when the server is not root.
     */
    runAs: z
      .string()
      .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/, 'sandbox.run_as must be a user name or a numeric uid')
      .optional(),
    /**
     * Whether a writable cgroup (the per-command process and memory bounds) is required to start: default
     * `required` when the effective mode is `required`, `optional` otherwise. `optional` accepts rlimits only
     * (CPU time, address space, file size) and warns at start.
     */
    cgroups: z.enum(['required', 'optional']).optional(),
  })
  .strict()
  .prefault({});
