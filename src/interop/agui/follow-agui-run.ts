import { asAgentEventEnvelope } from '../../protocol/agent-event-envelope.js';
import type { RunRecord } from '../../protocol/run-record.js';
import type { AgentSession } from '../../runtime/session-kernel/agent-session.js';
import type { AguiEventMapper } from './agui-event-mapper.js';
import type { AguiSseStream } from './agui-sse-stream.js';

/** What a followed AG-UI stream needs: the session's event log, the run's mapper, the response and a cursor. */
export interface AguiFollow {
  session: AgentSession;
  mapper: AguiEventMapper;
  stream: AguiSseStream;
  /** Replay retained events with session_sequence > after, then follow live ones. */
  after: number;
  /** Settles when the run's producer ended: the terminal events for a run whose agent_end was not retained. */
  done?: Promise<RunRecord> | undefined;
}

/**
 * Feed a run's events to its AG-UI stream: the retained ones after the cursor, then live ones from the
 * session's event log (the subscription the WebSocket uses: replay and listener in one tick, so nothing is
 * missed or doubled), until the mapper produced its terminal event or the client went away.
 */
export function followAguiRun({ session, mapper, stream, after, done }: AguiFollow): void {
  let unsubscribe: (() => void) | undefined;
  const stop = () => {
    unsubscribe?.();
    unsubscribe = undefined;
  };
  const over = () => mapper.finished || stream.isClosed;
  const finish = () => {
    stop();
    stream.close();
  };
  stream.onClose(stop);
  if (stream.isClosed) return;
  const subscription = session.events.subscribe(after, (event) => {
    if (over()) return;
    stream.write(mapper.map(asAgentEventEnvelope(event)));
    if (over()) finish();
  });
  unsubscribe = subscription.unsubscribe;
  for (const event of subscription.replay.events) {
    if (over()) break;
    stream.write(mapper.map(asAgentEventEnvelope(event)));
  }
  if (over()) {
    finish();
    return;
  }
  done?.then(
    (record) => {
      // agent_end precedes the producer's end; a later turn of the event loop lets any straggler through first.
      setImmediate(() => {
        if (over()) return;
        const status = record.status === 'completed' || record.status === 'cancelled' ? record.status : 'failed';
        stream.write(mapper.ended(status, record.result?.text ?? '', record.error));
        finish();
      });
    },
    () => {
      if (over()) return;
      stream.write(mapper.error('the run ended with an internal error', 'INTERNAL_ERROR'));
      finish();
    },
  );
}
