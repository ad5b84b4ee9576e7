import type { CodeConfig } from '../../config/code-config.js';
import { CodeError } from '../../errors.js';
import type { SessionOptions } from '../../protocol/session-options.js';
import type { SessionRetention } from './resolved-session-config.js';

/** A session's retention bounds and the notes (initWarning) about seed retention options this server does not honour as asked. */
export interface ResolvedRetention {
  retention: SessionRetention;
  warnings: string[];
}

/**
 * Resolve retentionLimits (ours and the seed's names) and artifactStoreLimits against the server's limits.
 * Every bound stays on: `unbounded: true` lifts nothing, and artifact bounds never exceed the server's.
 */
export function resolveRetention(options: SessionOptions, limits: CodeConfig['limits']): ResolvedRetention {
  const given = options.retentionLimits ?? {};
  if (given.maxRuns !== undefined && given.maxRunsRetained !== undefined && given.maxRuns !== given.maxRunsRetained) {
    throw new CodeError(
      'SESSION_CONFIGURATION_ERROR',
      `retentionLimits.maxRunsRetained: ${given.maxRunsRetained} conflicts with retentionLimits.maxRuns ${given.maxRuns} (the same bound under the seed's name); give one`,
      {
        field: 'retentionLimits.maxRunsRetained',
      },
    );
  }
  const warnings: string[] = [];
  if (given.unbounded === true)
    warnings.push(
      'retentionLimits.unbounded: this server keeps every retention bound (runs, events per run, trace events); the defaults apply where no value is given',
    );
  if (given.maxEventBytesPerRun !== undefined)
    warnings.push(
      `retentionLimits.maxEventBytesPerRun: not enforced yet; events per run are bounded by count (maxEventsPerRun)`,
    );
  const artifacts = options.artifactStoreLimits ?? {};
  if (artifacts.maxArtifacts !== undefined && artifacts.maxArtifacts > limits.maxArtifactsPerSession) {
    warnings.push(
      `artifactStoreLimits.maxArtifacts: capped at the server's limits.maxArtifactsPerSession (${limits.maxArtifactsPerSession})`,
    );
  }
  if (artifacts.maxBytes !== undefined && artifacts.maxBytes > limits.maxArtifactBytesPerSession) {
    warnings.push(
      `artifactStoreLimits.maxBytes: capped at the server's limits.maxArtifactBytesPerSession (${limits.maxArtifactBytesPerSession})`,
    );
  }
  return {
    retention: {
      maxRuns: given.maxRuns ?? given.maxRunsRetained ?? limits.maxRuns,
      maxEventsPerRun: given.maxEventsPerRun ?? limits.maxEventsPerRun,
      maxTraceEvents: given.maxTraceEvents ?? limits.maxTraceEvents,
      maxArtifacts: Math.min(artifacts.maxArtifacts ?? limits.maxArtifactsPerSession, limits.maxArtifactsPerSession),
      maxArtifactBytes: Math.min(
        artifacts.maxBytes ?? limits.maxArtifactBytesPerSession,
        limits.maxArtifactBytesPerSession,
      ),
      maxTerminalSubagentTasks: given.maxTerminalSubagentTasks ?? limits.maxTerminalSubagentTasks,
    },
    warnings,
  };
}
