import type { AttachmentRef } from '../../protocol/attachments.js';
import type { ChatMessage } from '../../protocol/chat-message.js';
import type { ExternalTaskSnapshot } from '../../protocol/queue.js';
import type { StoredQuestion } from '../../protocol/questions.js';
import type { RevertState } from '../../protocol/revert.js';
import type { RunRecord, Usage } from '../../protocol/run-record.js';
import type { Artifact, SessionSnapshotV1 } from '../../protocol/session-snapshot.js';
import type { SubagentTaskSnapshot } from '../../protocol/subagent-task.js';
import type { VerificationReport } from '../../protocol/verification.js';

/** State restored from a snapshot. */
export interface RestoredState {
  messages: ChatMessage[];
  usage: Usage;
  createdAtMs: number;
  generation: number;
  runs: RunRecord[];
  artifacts: Artifact[];
  trace: SessionSnapshotV1['trace_events'];
  verifications: VerificationReport[];
  subagentTasks: SubagentTaskSnapshot[];
  sessionSequence: number;
  /** External tasks pending when the snapshot was taken; the restored queue settles them as lost (run_lost). */
  externalTasks?: ExternalTaskSnapshot[];
  /** "Allow always" grant keys the session held when it was saved (absent in older snapshots: none). */
  permissionGrants?: readonly string[];
  /** The run queue's ids in start order (absent in older snapshots: none). */
  runQueue?: readonly string[];
  /** Questions kept when the session was saved (absent in older snapshots: none). */
  questions?: readonly StoredQuestion[];
  /** The transcript's epoch (absent in older snapshots: 0). */
  transcriptEpoch?: number;
  /** The reverted runs' hidden messages (absent: none reverted, or an older snapshot). */
  reverted?: RevertState;
  /** The attachment references of queued runs, by run id (absent: none). */
  runQueueAttachments?: Readonly<Record<string, readonly AttachmentRef[]>>;
}
