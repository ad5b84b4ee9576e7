import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { SessionEventLog, type EventLogLimits } from '../../src/runtime/events/session-event-log.js';

const roomy: EventLogLimits = { maxEventsPerRun: 1000, maxRuns: 100, maxSessionEvents: 1000 };

function append(log: SessionEventLog, runId: string | undefined, type = 'text_delta', n = 1): EventEnvelope[] {
  const out: EventEnvelope[] = [];
  for (let i = 0; i < n; i += 1) {
    out.push(
      log.append({
        version: 1,
        type,
        payload: { i },
        metadata: { ...(runId !== undefined ? { run_id: runId } : {}), session_id: 's', timestamp_ms: 1 },
      }),
    );
  }
  return out;
}

const seqs = (events: readonly EventEnvelope[]) => events.map((e) => e.metadata.session_sequence);
const runSeqs = (events: readonly EventEnvelope[]) => events.map((e) => e.metadata.sequence);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('SessionEventLog', () => {
  it('stamps session_sequence from 1 and per-run sequence from 0, interleaved with run-less events', () => {
    const log = new SessionEventLog(roomy);
    const a = append(log, 'r1', 'agent_start', 2);
    const direct = append(log, undefined, 'tool_end');
    const b = append(log, 'r1', 'agent_end');
    const c = append(log, 'r2', 'agent_start', 2);
    expect(seqs([...a, ...direct, ...b, ...c])).toEqual([1, 2, 3, 4, 5, 6]);
    expect(runSeqs([...a, ...b])).toEqual([0, 1, 2]);
    expect(direct[0].metadata.sequence).toBeUndefined();
    expect(runSeqs(c)).toEqual([0, 1]);
    expect(log.lastSequence).toBe(6);
  });

  it('replays across runs and run-less events in session order, from any cursor', () => {
    const log = new SessionEventLog(roomy);
    append(log, 'r1', 'x', 3);
    append(log, undefined, 'y');
    append(log, 'r2', 'x', 3);
    append(log, undefined, 'y');
    expect(seqs(log.replay(0).events)).toEqual(range(1, 8));
    expect(seqs(log.replay(3).events)).toEqual(range(4, 8));
    expect(seqs(log.replay(8).events)).toEqual([]);
    expect(log.replay(0).gap).toBeUndefined();
    expect(seqs(log.read(2, 3))).toEqual([3, 4, 5]);
    expect(seqs(log.retained(3))).toEqual([6, 7, 8]);
  });

  it('never reuses sequences after dropRun, and reports the dropped run as a gap', () => {
    const log = new SessionEventLog(roomy);
    append(log, 'r1', 'x', 4);
    append(log, 'r2', 'x', 2);
    log.dropRun('r1');
    expect(log.runPage('r1', -1, 10)).toBeUndefined();
    expect(log.runCounts('r1')).toEqual({ total: 0, firstRetained: 0 });
    const next = append(log, 'r3', 'x');
    expect(next[0].metadata.session_sequence).toBe(7);
    const replay = log.replay(0);
    expect(seqs(replay.events)).toEqual([5, 6, 7]);
    expect(replay.gap).toEqual({ after: 0, firstAvailable: 5 });
    expect(log.replay(4).gap).toBeUndefined();
    // A run id seen again starts a fresh bucket; the session sequence keeps counting.
    const again = append(log, 'r1', 'x');
    expect(again[0].metadata).toMatchObject({ sequence: 0, session_sequence: 8 });
  });

  it('drops the oldest events of a run beyond maxEventsPerRun and reports holes anywhere in the replay', () => {
    const log = new SessionEventLog({ maxEventsPerRun: 3, maxRuns: 10, maxSessionEvents: 10 });
    append(log, 'r1', 'x', 5); // 1..5, retains 3..5
    append(log, undefined, 'y'); // 6
    append(log, 'r2', 'x', 6); // 7..12, retains 10..12
    expect(seqs(log.replay(0).events)).toEqual([3, 4, 5, 6, 10, 11, 12]);
    expect(log.replay(0).gap).toEqual({ after: 0, firstAvailable: 3 });
    expect(log.replay(2).gap).toEqual({ after: 6, firstAvailable: 10 });
    expect(log.firstGap(3, log.read(3, 3))).toBeUndefined();
    expect(log.replay(9).gap).toBeUndefined();
    expect(log.runCounts('r2')).toEqual({ total: 6, firstRetained: 3 });
  });

  it('reports a gap when everything after the cursor was dropped', () => {
    const log = new SessionEventLog({ maxEventsPerRun: 2, maxRuns: 10, maxSessionEvents: 10 });
    append(log, 'r1', 'x', 4);
    log.dropRun('r1');
    const replay = log.replay(1);
    expect(replay.events).toEqual([]);
    expect(replay.gap).toEqual({ after: 1, firstAvailable: 5 });
    expect(log.replay(4).gap).toBeUndefined();
  });

  it('bounds run-less events by maxSessionEvents', () => {
    const log = new SessionEventLog({ maxEventsPerRun: 10, maxRuns: 10, maxSessionEvents: 2 });
    append(log, undefined, 'y', 5);
    expect(seqs(log.replay(0).events)).toEqual([4, 5]);
    expect(log.size).toBe(2);
  });

  it('pages one run by per-run sequence with nextAfter and the retention gap', () => {
    const log = new SessionEventLog({ maxEventsPerRun: 5, maxRuns: 10, maxSessionEvents: 10 });
    append(log, 'r1', 'x', 8); // per-run 0..7, retains 3..7
    append(log, 'r2', 'x', 2);
    const first = log.runPage('r1', -1, 2);
    expect(runSeqs(first?.events ?? [])).toEqual([3, 4]);
    expect(first?.retentionGap).toEqual({ firstAvailableSequence: 3 });
    expect(first?.nextAfter).toBe(4);
    // The seed's page fields: 8 events emitted (5 retained, from 3), more after this page.
    expect(first).toMatchObject({ firstAvailableSequence: 3, latestSequenceExclusive: 8, hasMore: true });
    const second = log.runPage('r1', 4, 2);
    expect(runSeqs(second?.events ?? [])).toEqual([5, 6]);
    expect(second?.retentionGap).toBeUndefined();
    expect(second?.nextAfter).toBe(6);
    const last = log.runPage('r1', 6, 2);
    expect(runSeqs(last?.events ?? [])).toEqual([7]);
    expect(last?.nextAfter).toBeUndefined();
    expect(last?.hasMore).toBe(false);
    expect(log.runPage('r1', 2, 10)?.retentionGap).toBeUndefined();
    expect(log.runPage('r1', 1, 10)?.retentionGap).toEqual({ firstAvailableSequence: 3 });
    expect(log.runPage('r1', 7, 10)).toEqual({
      events: [],
      retentionGap: undefined,
      nextAfter: undefined,
      firstAvailableSequence: 3,
      latestSequenceExclusive: 8,
      hasMore: false,
    });
    expect(log.runPage('nope', -1, 10)).toBeUndefined();
  });

  it('fans out synchronously, so replay-then-listen in one tick has no gap or duplicate', () => {
    const log = new SessionEventLog(roomy);
    append(log, 'r1', 'x', 3);
    const live: number[] = [];
    const { replay, unsubscribe } = log.subscribe(1, (e) => live.push(e.metadata.session_sequence));
    append(log, 'r1', 'x', 2);
    expect([...seqs(replay.events), ...live]).toEqual([2, 3, 4, 5]);
    unsubscribe();
    append(log, 'r1', 'x');
    expect(live).toEqual([4, 5]);
    expect(log.listenerCount).toBe(0);
    // Without a cursor, subscribe is live only.
    expect(log.subscribe(undefined, () => undefined).replay.events).toEqual([]);
  });

  it('lets a listener unsubscribe itself during fan-out without skipping the others', () => {
    const log = new SessionEventLog(roomy);
    const seen: string[] = [];
    const stopA = log.listen(() => {
      seen.push('a');
      stopA();
    });
    log.listen(() => seen.push('b'));
    append(log, 'r1', 'x', 2);
    expect(seen).toEqual(['a', 'b', 'b']);
  });

  it('restores a snapshot trace: sequences continue, per-run counts and gaps are derived, limits apply', () => {
    const source = new SessionEventLog({ maxEventsPerRun: 100, maxRuns: 10, maxSessionEvents: 100 });
    append(source, 'r1', 'x', 6);
    append(source, undefined, 'y');
    append(source, 'r2', 'x', 3);
    const trace = source.retained(6); // session sequences 5..10: r1 per-run 4..5, the run-less 7, r2 0..2
    const restored = new SessionEventLog({ maxEventsPerRun: 100, maxRuns: 10, maxSessionEvents: 100 }, 10);
    restored.restore([...trace].reverse());
    expect(restored.lastSequence).toBe(10);
    expect(seqs(restored.replay(0).events)).toEqual([5, 6, 7, 8, 9, 10]);
    expect(restored.replay(0).gap).toEqual({ after: 0, firstAvailable: 5 });
    expect(restored.runCounts('r1')).toEqual({ total: 6, firstRetained: 4 });
    expect(restored.runPage('r1', -1, 10)?.retentionGap).toEqual({ firstAvailableSequence: 4 });
    const next = append(restored, 'r1', 'x');
    expect(next[0].metadata).toMatchObject({ sequence: 6, session_sequence: 11 });

    const tight = new SessionEventLog({ maxEventsPerRun: 1, maxRuns: 10, maxSessionEvents: 100 }, 10);
    tight.restore(trace);
    expect(seqs(tight.replay(0).events)).toEqual([6, 7, 10]);
    expect(tight.runCounts('r2')).toEqual({ total: 3, firstRetained: 2 });
  });

  it('keeps reads correct while dropped entries are compacted away', () => {
    const log = new SessionEventLog({ maxEventsPerRun: 10, maxRuns: 10, maxSessionEvents: 10 });
    for (let i = 0; i < 2000; i += 1) append(log, i % 7 === 0 ? undefined : 'r1', 'x');
    const retained = log.replay(0).events;
    expect(retained).toHaveLength(20);
    expect(log.size).toBe(20);
    const expected = range(1, 2000)
      .filter((n) => (n - 1) % 7 !== 0)
      .slice(-10)
      .concat(
        range(1, 2000)
          .filter((n) => (n - 1) % 7 === 0)
          .slice(-10),
      );
    expect(seqs(retained)).toEqual(expected.sort((a, b) => a - b));
    expect(seqs(log.read(1990, 100))).toEqual(expected.filter((n) => n > 1990));
  });

  it("maxEventBytesPerRun drops a run's oldest events until their payloads fit, keeps the newest, and holds after a restore", () => {
    // Each payload {"i":N} is 7 bytes for N < 10: 3 of them fit in 21 bytes.
    const limits: EventLogLimits = { ...roomy, maxEventBytesPerRun: 21 };
    const log = new SessionEventLog(limits);
    append(log, 'r1', 'text_delta', 5);
    const page = log.runPage('r1', -1, 100);
    expect(runSeqs(page?.events ?? [])).toEqual([2, 3, 4]);
    expect(page?.retentionGap).toEqual({ firstAvailableSequence: 2 });
    // Another run has a bound of its own; a run-less event none.
    append(log, 'r2', 'text_delta', 1);
    expect(runSeqs(log.runPage('r2', -1, 100)?.events ?? [])).toEqual([0]);
    // One event larger than the bound alone is kept (the newest is always readable).
    const big = new SessionEventLog({ ...roomy, maxEventBytesPerRun: 4 });
    append(big, 'r1', 'text_delta', 3);
    expect(runSeqs(big.runPage('r1', -1, 100)?.events ?? [])).toEqual([2]);
    // Restored under a tighter bound: the sizes are counted again and the oldest go.
    const restored = new SessionEventLog({ ...roomy, maxEventBytesPerRun: 14 });
    restored.restore(log.retained(100));
    expect(runSeqs(restored.runPage('r1', -1, 100)?.events ?? [])).toEqual([3, 4]);
    append(restored, 'r1', 'text_delta', 1);
    expect(runSeqs(restored.runPage('r1', -1, 100)?.events ?? [])).toEqual([4, 5]);
    // Without the bound nothing is measured and nothing is dropped by size.
    const free = new SessionEventLog(roomy);
    append(free, 'r1', 'text_delta', 5);
    expect(runSeqs(free.runPage('r1', -1, 100)?.events ?? [])).toEqual([0, 1, 2, 3, 4]);
  });
});
