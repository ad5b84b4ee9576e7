import type { TraceParent } from '../ports/telemetry.js';
import type { ResolvedRunWebhook } from '../ports/run-webhooks.js';
import type { AttachmentRef } from '../../protocol/attachments.js';
import type { ChatMessage } from '../../protocol/chat-message.js';
import type { LoopCheckpoint } from '../../protocol/loop-checkpoint.js';
import type { MultitaskStrategy } from '../../protocol/multitask-strategy.js';
import type { RunRecord } from '../../protocol/run-record.js';

/** A run request. */
export interface RunRequest {
  input: string;
  /** Side question: run on this history instead of the transcript, and leave the transcript unchanged. */
  history?: ChatMessage[];
  idempotencyKey?: string;
  /** The user message's attachments, already checked and stored (references only). */
  attachments?: AttachmentRef[];
  /** Resume a run from its loop checkpoint (a new run id; the old run is named in metadata). */
  resumeFrom?: LoopCheckpoint;
  /** A child session's run: aborting this signal (the delegating call's) cancels the run. */
  parentSignal?: AbortSignal;
  /** What to do while another run is active (default reject: SESSION_BUSY); docs/runs.md. */
  multitaskStrategy?: MultitaskStrategy;
  /** The span of the request that started the run (traces on): the run's span is its child. Never stored. */
  traceParent?: TraceParent;
  /** The run's webhook, checked (docs/webhooks.md); a resumed run gets its origin's from the store. */
  webhook?: ResolvedRunWebhook;
}

/** An admitted (or, with an idempotency key, an existing) run. */
export interface RunHandle {
  record: RunRecord;
  /** Settles when the run's producer has ended (result recorded, autosave done, lease released). */
  done: Promise<RunRecord>;
  existing: boolean;
  /** Set while the run waits in the session's run queue: 1 starts next. */
  queuePosition?: number;
  /** A queued run of an autoSave session: settles once the snapshot that lists it is saved (answer after it). */
  saved?: Promise<void>;
}
