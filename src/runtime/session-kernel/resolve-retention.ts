import type { CodeConfig } from '../../config/code-config.js';
import { CodeError } from '../../errors.js';
import { RETENTION_CEILINGS, type SessionOptions } from '../../protocol/session-options.js';
import type { SessionRetention } from './resolved-session-config.js';

/** A session's retention bounds and the notes (initWarning) about seed retention options this server does not honour as asked. */
export interface ResolvedRetention {
  retention: SessionRetention;
  warnings: string[];
}

/**
 * Resolve retentionLimits (ours and the seed's names) and artifactStoreLimits against the server's limits.
 * Every bound stays on: `unbounded: true` gives the bounds it does not name their ceiling (RETENTION_CEILINGS)
 * instead of the server's default, and artifact bounds never exceed the server's.
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
  const unbounded = given.unbounded === true;
  if (unbounded)
    warnings.push(
      `retentionLimits.unbounded: no bound is switched off here; the bounds not given take their ceiling (maxRuns ${RETENTION_CEILINGS.maxRuns}, maxEventsPerRun ${RETENTION_CEILINGS.maxEventsPerRun}, maxTraceEvents ${RETENTION_CEILINGS.maxTraceEvents}, maxTerminalSubagentTasks ${RETENTION_CEILINGS.maxTerminalSubagentTasks})`,
    );
  const fallback = unbounded ? RETENTION_CEILINGS : limits;
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
      maxRuns: given.maxRuns ?? given.maxRunsRetained ?? fallback.maxRuns,
      maxEventsPerRun: given.maxEventsPerRun ?? fallback.maxEventsPerRun,
      ...(given.maxEventBytesPerRun !== undefined ? { maxEventBytesPerRun: given.maxEventBytesPerRun } : {}),
      maxTraceEvents: given.maxTraceEvents ?? fallback.maxTraceEvents,
      maxArtifacts: Math.min(artifacts.maxArtifacts ?? limits.maxArtifactsPerSession, limits.maxArtifactsPerSession),
      maxArtifactBytes: Math.min(
        artifacts.maxBytes ?? limits.maxArtifactBytesPerSession,
        limits.maxArtifactBytesPerSession,
      ),
      maxTerminalSubagentTasks: given.maxTerminalSubagentTasks ?? fallback.maxTerminalSubagentTasks,
    },
    warnings,
  };
}
