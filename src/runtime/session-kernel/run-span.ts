import type { RunRecord } from '../../protocol/run-record.js';
import type { Telemetry, TraceSpan } from '../ports/telemetry.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { LoopCheckpoint } from '../../protocol/loop-checkpoint.js';
import type { TraceParent } from '../ports/telemetry.js';

/**
 * The run's span (`invoke_agent <model>`): ids, the model and the agent, never the prompt. A run resumed from a
 * checkpoint (on another node, or after a restart) continues the trace of the run it resumes, as a child of that
 * run's span, and links the request that resumed it (when one did).
 */
export function runSpan(
  telemetry: Telemetry,
  config: ResolvedSessionConfig,
  record: RunRecord,
  request: { readonly resumeFrom?: LoopCheckpoint | undefined; readonly traceParent?: TraceParent | undefined },
): TraceSpan {
  const resumed = request.resumeFrom?.trace_parent;
  const original = resumed === undefined ? undefined : telemetry.incoming({ traceparent: resumed });
  const span = telemetry.span(
    `invoke_agent ${config.model.id}`,
    'internal',
    {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': config.agentDefinition?.name,
      'gen_ai.request.model': config.model.modelName,
      'a3s.session.id': config.sessionId,
      'a3s.tenant.id': config.ownerTenantId,
      'a3s.run.id': record.runId,
      'a3s.run.resumed_from': request.resumeFrom?.run_id,
    },
    original ?? request.traceParent,
    original !== undefined && request.traceParent !== undefined ? [request.traceParent] : undefined,
  );
  span.setContent({ 'a3s.run.input': record.input });
  return span;
}
