import type { EventEnvelope } from '../../protocol/event-envelope.js';
import type { CheckpointStore } from '../../stores/checkpoint-store.js';
import type { SessionKey } from '../../stores/session-key.js';
import type { SessionOwnership } from '../ports/session-ownership.js';

/** What a node taking a session over knows of the run its dead owner left in flight. */
export interface LostRunFacts {
  /** The run's input: from its last checkpoint, else its agent_start event ('' when neither survived). */
  input: string;
  /** When it started (its agent_start event), when known. */
  createdAtMs?: number;
}

// The stream read is bounded: a takeover never waits on it for long.
const STREAM_READ_MS = 2000;

/**
 * The input and start of a run lost with its node, for the runs list of the session taken over: the run's
 * checkpoint (after a completed tool round) or the agent_start event its node published to the shared
 * stream after the snapshot `afterSequence` was saved. Never throws: what cannot be read stays unknown.
 */
export async function lostRunFacts(
  ownership: SessionOwnership,
  checkpoints: CheckpointStore,
  key: SessionKey,
  runId: string,
  afterSequence: number,
): Promise<LostRunFacts> {
  const [checkpoint, started] = await Promise.all([
    checkpoints.load(key, runId).catch(() => undefined),
    runStart(ownership, key, runId, afterSequence),
  ]);
  const prompt = started?.payload.prompt;
  return {
    input: checkpoint?.input ?? (typeof prompt === 'string' ? prompt : ''),
    ...(started ? { createdAtMs: started.metadata.timestamp_ms } : {}),
  };
}

/** The run's agent_start event among those published after `after`, read up to the stream's last one. */
async function runStart(
  ownership: SessionOwnership,
  key: SessionKey,
  runId: string,
  after: number,
): Promise<EventEnvelope | undefined> {
  const stream = ownership.stream;
  if (!stream) return undefined;
  try {
    const last = await stream.lastSequence(key);
    if (last === undefined || last <= after) return undefined;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), STREAM_READ_MS);
    let found: EventEnvelope | undefined;
    try {
      await stream.follow(
        key,
        after,
        (event) => {
          if (event.type === 'agent_start' && event.metadata.run_id === runId) found = event;
          if (found || (event.metadata.session_sequence ?? 0) >= last) controller.abort();
        },
        controller.signal,
      );
    } finally {
      clearTimeout(timer);
    }
    return found;
  } catch {
    return undefined;
  }
}
