import { CodeError } from '../../errors.js';
import type { PlanProgress } from '../../protocol/planning.js';
import type { RunRecord } from '../../protocol/run-record.js';
import type { RunCheckpoints } from '../../stores/checkpoint-store.js';
import { toCheckpoint } from '../loop/checkpoint-codec.js';
import type { LoopState } from '../loop/run-loop.js';
import type { HostEnv } from '../ports/host-env.js';
import type { SessionEmit } from './session-emitter.js';

/** What saving a run's checkpoint needs from its session. */
export interface CheckpointSaver {
  readonly config: { readonly sessionId: string };
  readonly hostEnv: HostEnv;
  readonly checkpoints: RunCheckpoints;
  readonly emit: SessionEmit;
}

/**
 * Save the loop state after a completed tool round (with the run span's `traceparent` when traced, so a resumed run
 * continues its trace); a failure is reported as `persistence_failed`, never fatal to the run.
 */
export async function saveRunCheckpoint(
  host: CheckpointSaver,
  record: RunRecord,
  input: string,
  state: LoopState,
  plan?: PlanProgress,
  traceParent?: string,
): Promise<void> {
  const checkpoint = toCheckpoint(state, {
    runId: record.runId,
    sessionId: host.config.sessionId,
    input,
    sideQuestion: record.sideQuestion,
    now: host.hostEnv.now(),
    ...(plan ? { plan } : {}),
    ...(traceParent !== undefined ? { traceParent } : {}),
  });
  try {
    await host.checkpoints.save(checkpoint);
    host.emit(record.runId, 'checkpoint_saved', { turn: state.turn, store: host.checkpoints.kind });
  } catch (error) {
    host.emit(record.runId, 'persistence_failed', {
      session_id: host.config.sessionId,
      operation: 'checkpoint',
      error: `checkpoint of run ${record.runId}: ${error instanceof Error ? error.message : String(error)}`,
      code: error instanceof CodeError ? error.code : 'PERSISTENCE_FAILED',
    });
  }
}
