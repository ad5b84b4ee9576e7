import type { RunRecord } from '../../protocol/run-record.js';
import type { Telemetry, TraceSpan } from '../ports/telemetry.js';
import type { ResolvedSessionConfig } from './resolved-session-config.js';
import type { LoopCheckpoint } from '../../protocol/loop-checkpoint.js';
import type { TraceParent } from '../ports/telemetry.js';

/** The run's span (`invoke_agent <model>`): ids, the model and the agent, never the prompt. */
export function runSpan(
  telemetry: Telemetry,
  config: ResolvedSessionConfig,
  record: RunRecord,
  request: { readonly resumeFrom?: LoopCheckpoint | undefined; readonly traceParent?: TraceParent | undefined },
): TraceSpan {
  return telemetry.span(
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
    request.traceParent,
  );
}
