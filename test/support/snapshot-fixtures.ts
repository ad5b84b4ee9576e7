import type { SessionSnapshotV1 } from '../../src/protocol/session-snapshot.js';

/** Options for makeSnapshot. */
export interface MakeSnapshotOptions {
  /** Extra transcript text, in bytes of ASCII, to make the snapshot large (e.g. a few MB for crash tests). */
  paddingBytes?: number;
  /** The owner tenant (default "tenant-a"): session ids are per tenant. */
  tenantId?: string;
}

/**
 * A snapshot of a session whose id SessionOptions would refuse (any characters: old data, other writers),
 * so its options carry no sessionId; for tests of how stores encode ids.
 */
export function makeOddIdSnapshot(sessionId: string, generation: number, tenantId: string): SessionSnapshotV1 {
  const snapshot = makeSnapshot(sessionId, generation, { tenantId });
  delete snapshot.session.options.sessionId;
  return snapshot;
}

/** A complete, schema-valid SessionSnapshotV1 for `sessionId` at `generation`, deterministic for equal inputs. */
export function makeSnapshot(
  sessionId: string,
  generation: number,
  options: MakeSnapshotOptions = {},
): SessionSnapshotV1 {
  const createdAtMs = 1_700_000_000_000;
  const updatedAtMs = createdAtMs + generation * 1000;
  const padding = options.paddingBytes ?? 0;
  const tenantId = options.tenantId ?? 'tenant-a';
  return {
    schema_version: 1,
    generation,
    saved_at_ms: updatedAtMs,
    session: {
      id: sessionId,
      ownerTenantId: tenantId,
      workspace: '/workspaces/demo',
      model: 'fake/model-1',
      options: { sessionId, model: 'fake/model-1', workspace: '/workspaces/demo' },
      labels: { tenantId, principal: 'ci-bot' },
      messages: [
        { role: 'system', content: 'You are a coding agent.' },
        { role: 'user', content: `generation ${generation}` },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call-1', type: 'function', function: { name: 'read', arguments: '{"path":"README.md"}' } },
          ],
        },
        { role: 'tool', content: padding > 0 ? 'x'.repeat(padding) : 'file contents', tool_call_id: 'call-1' },
        { role: 'assistant', content: `done with generation ${generation}` },
      ],
      usage: { promptTokens: 10 * generation, completionTokens: 5 * generation, totalTokens: 15 * generation },
      createdAtMs,
      updatedAtMs,
      sessionSequence: generation,
    },
    artifacts: [{ id: 'artifact-1', toolCallId: 'call-1', toolName: 'read', createdAtMs, content: 'full output' }],
    trace_events: [
      {
        version: 1,
        type: 'agent_start',
        payload: { prompt: `generation ${generation}` },
        metadata: {
          run_id: 'run-1',
          session_id: sessionId,
          sequence: 0,
          session_sequence: 1,
          timestamp_ms: createdAtMs,
        },
      },
    ],
    run_records: [
      {
        runId: 'run-1',
        sessionId,
        status: 'completed',
        input: `generation ${generation}`,
        sideQuestion: false,
        createdAtMs,
        endedAtMs: updatedAtMs,
        eventCount: 1,
        firstRetainedSequence: 0,
      },
    ],
    verification_reports: [],
    subagent_tasks: [],
  };
}
