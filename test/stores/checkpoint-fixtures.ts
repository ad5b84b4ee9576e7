import type { LoopCheckpoint } from '../../src/protocol/loop-checkpoint.js';

/** Options for makeCheckpoint. */
export interface MakeCheckpointOptions {
  /** Extra tool output, in bytes of ASCII, to make the checkpoint large. */
  paddingBytes?: number;
  /** Session the run belongs to (default "s1"). */
  sessionId?: string;
}

/** A complete, schema-valid LoopCheckpoint for `runId` after tool round `turn`, deterministic for equal inputs. */
export function makeCheckpoint(runId: string, turn: number, options: MakeCheckpointOptions = {}): LoopCheckpoint {
  const padding = options.paddingBytes ?? 0;
  return {
    schema_version: 1,
    run_id: runId,
    session_id: options.sessionId ?? 's1',
    turn,
    input: 'fix the failing test',
    side_question: false,
    messages: [
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'user', content: 'fix the failing test' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: `call-${turn}`, type: 'function', function: { name: 'read', arguments: '{"path":"README.md"}' } },
        ],
      },
      {
        role: 'tool',
        content: padding > 0 ? 'x'.repeat(padding) : `round ${turn} output`,
        tool_call_id: `call-${turn}`,
      },
    ],
    total_usage: { prompt_tokens: 10 * turn, completion_tokens: 5 * turn, total_tokens: 15 * turn },
    tool_calls_count: turn,
    verification_reports: [],
    convergence: {
      tool_rounds: turn,
      parse_failures: 0,
      continuations: 0,
      last_call_key: 'read:README.md',
      same_call_count: 1,
    },
    checkpoint_ms: 1_700_000_000_000 + turn * 1000,
  };
}
