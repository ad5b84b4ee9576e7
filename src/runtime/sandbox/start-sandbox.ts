import path from 'node:path';
import type { Logger } from 'pino';
import type { CodeConfig } from '../../config/code-config.js';
import { CodeError } from '../../errors.js';
import { detectSandbox, type DetectedSandbox } from './detect-sandbox.js';
import type { SandboxLimits, SandboxNetwork } from './sandbox.js';
import type { ServerSandbox } from './session-commands.js';

/** The server's sandbox after detection, with the configuration sessions need. */
export interface StartedSandbox extends ServerSandbox, Pick<DetectedSandbox, 'dispose'> {
  /** What /readyz and session info report. */
  readonly kind: 'bwrap' | 'none';
  readonly mode: 'required' | 'auto';
  /** The operator's default network for contained commands. */
  readonly network: SandboxNetwork;
}

const MB = 1024 * 1024;

/** The per-command limits of config `sandbox`. */
export function sandboxLimits(config: CodeConfig): SandboxLimits {
  const s = config.sandbox;
  return { pidsMax: s.pidsMax, memoryBytes: s.memoryMb * MB, cpuSeconds: s.cpuSeconds, addressSpaceBytes: s.addressSpaceMb * MB };
}

/** The effective mode: configured, else `required` whenever API tokens are configured, `auto` otherwise. */
export function sandboxMode(config: CodeConfig): 'required' | 'auto' {
  return config.sandbox.mode ?? (config.apiTokens.length > 0 ? 'required' : 'auto');
}

/**
 * Detect the sandbox, say at start which one is active, and refuse to start in `required` mode without
 * a working one (SESSION_INITIALIZATION_ERROR, resource `sandbox`).
 */
export async function startSandbox(config: CodeConfig, logger: Logger): Promise<StartedSandbox> {
  const mode = sandboxMode(config);
  const detected = await detectSandbox({ stateDir: path.join(config.dataDir, 'sandbox'), limits: sandboxLimits(config), readOnlyPaths: config.sandbox.readOnlyPaths });
  if (detected.sandbox.kind === 'none') {
    if (mode === 'required') {
      throw new CodeError('SESSION_INITIALIZATION_ERROR', `sandbox.mode is "required" (the default when API tokens are configured) but no sandbox works: ${detected.problem ?? 'unknown'}; install bubblewrap and enable user namespaces, or set sandbox.mode = "auto"`, { resource: 'sandbox' });
    }
    logger.warn({ sandbox: 'none', reason: detected.problem }, 'sandbox: none — model-chosen commands run on the host, and only in sessions created with host_direct');
  } else {
    logger.info({ sandbox: 'bwrap', cgroups: detected.cgroups, network: config.sandbox.network, hostDirect: config.sandbox.hostDirect }, 'sandbox: bwrap — model-chosen commands are contained');
    if (detected.cgroupProblem !== undefined || detected.cgroups === 'none') {
      logger.warn({ reason: detected.cgroupProblem }, 'sandbox: cgroups are not writable; commands get CPU and address-space rlimits but no process or memory bound');
    }
  }
  return { sandbox: detected.sandbox, hostDirect: config.sandbox.hostDirect, kind: detected.sandbox.kind, mode, network: config.sandbox.network, dispose: detected.dispose };
}

/** A started sandbox with no containment (tests of the no-sandbox path, and benchmarks' baselines). */
export async function noSandbox(config: CodeConfig): Promise<StartedSandbox> {
  const detected = await detectSandbox({ stateDir: path.join(config.dataDir, 'sandbox'), limits: sandboxLimits(config), disabled: true });
  return { sandbox: detected.sandbox, hostDirect: config.sandbox.hostDirect, kind: 'none', mode: sandboxMode(config), network: config.sandbox.network, dispose: detected.dispose };
}
