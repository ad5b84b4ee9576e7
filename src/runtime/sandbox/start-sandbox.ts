import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { CodeConfig } from '../../config/code-config.js';
import { CodeError } from '../../errors.js';
import { detectSandbox, type DetectedSandbox } from './detect-sandbox.js';
import { hostProcProblem, procMountPoints } from './host-proc-guard.js';
import { rememberRunAs, resolveRunAs, searchableBy, type RunAsUser } from './run-as.js';
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
  return {
    pidsMax: s.pidsMax,
    memoryBytes: s.memoryMb * MB,
    cpuSeconds: s.cpuSeconds,
    addressSpaceBytes: s.addressSpaceMb * MB,
  };
}

/** The effective mode: configured, else `required` whenever API tokens are configured, `auto` otherwise. */
export function sandboxMode(config: CodeConfig): 'required' | 'auto' {
  return config.sandbox.mode ?? (config.apiTokens.length > 0 ? 'required' : 'auto');
}

/** Whether a writable cgroup is required: configured, else `required` exactly when the effective mode is. */
export function sandboxCgroups(config: CodeConfig): 'required' | 'optional' {
  return config.sandbox.cgroups ?? (sandboxMode(config) === 'required' ? 'required' : 'optional');
}

/** sandbox.read_only_paths entries that would bind the host's procfs (symlinks followed): refused at start. */
function refuseHostProc(config: CodeConfig): void {
  const mounts = procMountPoints();
  for (const where of config.sandbox.readOnlyPaths) {
    const problem = hostProcProblem(where, mounts);
    if (problem !== undefined)
      throw new CodeError('SESSION_INITIALIZATION_ERROR', `sandbox.read_only_paths: ${problem}`, {
        resource: 'sandbox',
        field: 'sandbox.read_only_paths',
      });
  }
}

/** The run_as user of a root server, or the refusal to start: an explicit sandbox.run_as, or any in required mode, must exist. */
async function runAsUser(
  config: CodeConfig,
  mode: 'required' | 'auto',
  logger: Logger,
): Promise<RunAsUser | undefined> {
  const resolution = await resolveRunAs(config.sandbox.runAs);
  if (resolution.user) return resolution.user;
  if (resolution.problem === undefined) return undefined;
  if (mode === 'required' || resolution.explicit)
    throw new CodeError(
      'SESSION_INITIALIZATION_ERROR',
      `${resolution.problem}; the server runs as root, and contained commands must not`,
      { resource: 'sandbox', field: 'sandbox.run_as' },
    );
  logger.warn(
    { reason: resolution.problem },
    "sandbox: the server runs as root and sandbox.run_as is missing: contained commands run as root (files they leave are root's)",
  );
  return undefined;
}

/**
 * Detect the sandbox, say at start which one is active, and refuse to start in `required` mode without
 * a working one, fresh /proc included (SESSION_INITIALIZATION_ERROR, resource `sandbox`), and with sandbox.cgroups
 * `required` (the default in required mode) without a writable cgroup; `optional` warns instead. A
 * sandbox.read_only_paths entry that would show the host's procfs refuses the start in every mode. A root server resolves sandbox.run_as first
 * (commands run as that user; refused to start in required mode when it does not exist).
 */
export async function startSandbox(config: CodeConfig, logger: Logger): Promise<StartedSandbox> {
  const mode = sandboxMode(config);
  const cgroupsWanted = sandboxCgroups(config);
  refuseHostProc(config);
  const runAs = await runAsUser(config, mode, logger);
  const detected = await detectSandbox({
    stateDir: path.join(config.dataDir, 'sandbox'),
    limits: sandboxLimits(config),
    readOnlyPaths: config.sandbox.readOnlyPaths,
    maxFileBytes: config.limits.sandboxHomeBytes,
    ...(runAs ? { runAs } : {}),
  });
  for (const note of detected.notes ?? []) logger.info({ sandbox: 'bwrap' }, note);
  if (detected.sandbox.kind === 'none') {
    if (mode === 'required') {
      const fix =
        detected.problemPart === 'proc'
          ? 'give the server an unmasked /proc (docs/deployment.md)'
          : 'install bubblewrap and enable user namespaces (docs/deployment.md for containers)';
      throw new CodeError(
        'SESSION_INITIALIZATION_ERROR',
        `sandbox.mode is "required" (the default when API tokens are configured) but no sandbox works: ${detected.problem ?? 'unknown'}; ${fix}, or set sandbox.mode = "auto"`,
        { resource: 'sandbox', ...(detected.problemPart === 'proc' ? { part: 'proc' } : {}) },
      );
    }
    logger.warn(
      { sandbox: 'none', reason: detected.problem },
      'sandbox: none — model-chosen commands run on the host, and only in sessions created with host_direct',
    );
  } else {
    logger.info(
      {
        sandbox: 'bwrap',
        cgroups: detected.cgroups,
        network: config.sandbox.network,
        hostDirect: config.sandbox.hostDirect,
        ...(runAs ? { runAs: runAs.name, uid: runAs.uid } : {}),
      },
      'sandbox: bwrap — model-chosen commands are contained',
    );
    if (detected.cgroupProblem !== undefined || detected.cgroups === 'none') {
      if (cgroupsWanted === 'required') {
        await detected.dispose();
        throw new CodeError(
          'SESSION_INITIALIZATION_ERROR',
          `sandbox.cgroups is "required" (the default when sandbox.mode is "required") but no writable cgroup bounds commands' processes and memory: ${detected.cgroupProblem ?? 'no cgroup hierarchy'}; delegate a cgroup to the server, or set sandbox.cgroups = "optional" (A3S_SANDBOX_CGROUPS=optional) to accept rlimits only`,
          { resource: 'sandbox', field: 'sandbox.cgroups' },
        );
      }
      logger.warn(
        { reason: detected.cgroupProblem, cgroups: 'optional' },
        'sandbox: cgroups are not writable; commands get CPU, address-space and file-size rlimits but no process or memory bound (sandbox.cgroups = "optional")',
      );
    }
    if (runAs) await warnUnreachableRoots(config, runAs, logger);
  }
  // Tenant directories and the file tools' new files belong to run_as whenever the server is root with one.
  rememberRunAs(config, runAs);
  return {
    sandbox: detected.sandbox,
    hostDirect: config.sandbox.hostDirect,
    kind: detected.sandbox.kind,
    mode,
    network: config.sandbox.network,
    disk: {
      maxBytes: config.limits.sandboxHomeBytes,
      minFreeBytes: config.limits.minFreeDiskBytes,
      dataDir: path.resolve(config.dataDir),
    },
    ...(runAs ? { runAs } : {}),
    dispose: detected.dispose,
  };
}

/**
 * bwrap resolves every bind source by path as run_as: a workspace root it cannot search fails every command in a
 * workspace below it, a sandbox.read_only_paths entry it cannot reach fails every command.
 */
async function warnUnreachableRoots(config: CodeConfig, runAs: RunAsUser, logger: Logger): Promise<void> {
  const fix = `give it search permission (e.g. chmod o+x, or chgrp ${runAs.name} and chmod g+x)`;
  for (const root of [...(config.workspaceRoots ?? [process.cwd()]), ...config.sharedWorkspaceRoots]) {
    if (await searchableBy(root, runAs)) continue;
    logger.warn(
      { root, runAs: runAs.name },
      `sandbox: sandbox.run_as "${runAs.name}" cannot search workspace root ${root} (or a directory above it): commands in workspaces below it fail; ${fix}`,
    );
  }
  for (const where of config.sandbox.readOnlyPaths) {
    // A missing entry is skipped by bwrap (--ro-bind-try); an unreachable one stops it.
    if ((await lstat(where).catch(() => null)) === null || (await searchableBy(path.dirname(where), runAs))) continue;
    logger.warn(
      { path: where, runAs: runAs.name },
      `sandbox: sandbox.run_as "${runAs.name}" cannot reach sandbox.read_only_paths entry ${where}: every command fails while it is configured; ${fix}`,
    );
  }
}

/** A started sandbox with no containment (tests of the no-sandbox path, and benchmarks' baselines). */
export async function noSandbox(config: CodeConfig): Promise<StartedSandbox> {
  const detected = await detectSandbox({
    stateDir: path.join(config.dataDir, 'sandbox'),
    limits: sandboxLimits(config),
    disabled: true,
  });
  return {
    sandbox: detected.sandbox,
    hostDirect: config.sandbox.hostDirect,
    kind: 'none',
    mode: sandboxMode(config),
    network: config.sandbox.network,
    dispose: detected.dispose,
  };
}
