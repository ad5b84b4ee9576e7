import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import type { SessionLabels } from '../../src/protocol/session-snapshot.js';
import { EventOrigin } from '../../src/runtime/events/event-origin.js';
import { SessionEventLog, type EventLogLimits } from '../../src/runtime/events/session-event-log.js';
import { createLocalOwnership, type SessionOwnership } from '../../src/runtime/ports/session-ownership.js';
import { createSessionEmit, type SessionEmit } from '../../src/runtime/session-kernel/session-emitter.js';
import { sessionKey } from '../../src/stores/session-key.js';

const roomy: EventLogLimits = { maxEventsPerRun: 1000, maxRuns: 100, maxSessionEvents: 1000 };
const FULL_LABELS: SessionLabels = {
  tenantId: 't1',
  principal: 'alice',
  agentTemplateId: 'reviewer',
  correlationId: 'corr-9',
};

/** A session's emit over a log, with a clock the test moves (big jumps and a step back included). */
function emitter(
  log: SessionEventLog,
  labels: SessionLabels,
  ownership: SessionOwnership = createLocalOwnership('n1'),
  abandoned = () => false,
): { emit: SessionEmit; clock: { t: number } } {
  const clock = { t: 1_796_168_731_823 };
  const hostEnv = { now: () => clock.t, newId: (prefix: string) => `${prefix}_1` };
  const emit = createSessionEmit({
    sessionId: 's1',
    sessionKey: sessionKey('t1', 's1'),
    labels,
    events: log,
    hostEnv,
    ownership,
    lifecycle: {
      get abandoned() {
        return abandoned();
      },
    },
  });
  return { emit, clock };
}

/** Emit a mix of run and run-less events, moving the clock between them. */
function emitMix(emit: SessionEmit, clock: { t: number }): void {
  emit('r1', 'agent_start', { prompt: 'hi', model: 'openai/m', side_question: false });
  emit('r1', 'text_delta', { text: 'a' });
  clock.t += 2 ** 33; // beyond a small integer offset from the first event
  emit(undefined, 'checkpoint_saved', { turn: 1, store: 'memory' });
  emit('r1', 'text_delta', { text: 'b' });
  clock.t -= 2 ** 34; // the clock went back
  emit('r2', 'text_delta', { text: 'c' });
  clock.t += 1;
  emit('r1', 'turn_start', { turn: 2 });
}

const json = (events: readonly EventEnvelope[]) => events.map((e) => JSON.stringify(e));

// The collector is reachable in this test process only when asked for (vitest does not start node with --expose-gc).
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

describe('SessionEventLog records', () => {
  for (const [name, labels] of [
    ['without labels', {}],
    ['with every label', FULL_LABELS],
    ['with some labels', { tenantId: 't1', correlationId: 'corr-9' }],
  ] as const) {
    it(`builds on read the very envelopes live listeners got, byte for byte (${name})`, () => {
      const log = new SessionEventLog(roomy);
      const live: EventEnvelope[] = [];
      log.listen((e) => live.push(e));
      const { emit, clock } = emitter(log, labels);
      emitMix(emit, clock);
      const expected = json(live);
      expect(expected).toHaveLength(6);
      expect(json(log.read(0, Number.POSITIVE_INFINITY))).toEqual(expected);
      expect(json(log.replay(0).events)).toEqual(expected);
      expect(json(log.read(2, 2))).toEqual(expected.slice(2, 4));
      expect(json(log.retained(100))).toEqual(expected);
      expect(json(log.retained(2))).toEqual(expected.slice(4));
      expect(json(log.trace(3, 10, 100))).toEqual(expected.slice(3));
      expect(json(log.subscribe(1, () => undefined).replay.events)).toEqual(expected.slice(1));
      expect(json(log.runPage('r1', -1, 100)?.events ?? [])).toEqual(
        json(live.filter((e) => e.metadata.run_id === 'r1')),
      );
      expect(json(log.runPage('r1', 1, 1)?.events ?? [])).toEqual(
        json(live.filter((e) => e.metadata.run_id === 'r1').slice(2, 3)),
      );
      expect(json(log.runPage('r2', -1, 100)?.events ?? [])).toEqual(
        json(live.filter((e) => e.metadata.run_id === 'r2')),
      );

      // The wire order of the metadata keys, absent labels absent (not undefined).
      const labelKeys = [
        ['tenantId', 'tenant_id'],
        ['principal', 'principal'],
        ['agentTemplateId', 'agent_template_id'],
        ['correlationId', 'correlation_id'],
      ]
        .filter(([field]) => (labels as Record<string, string | undefined>)[field] !== undefined)
        .map(([, key]) => key);
      const [first, , direct] = log.read(0, 3);
      expect(Object.keys(first)).toEqual(['version', 'type', 'payload', 'metadata']);
      expect(Object.keys(first.metadata)).toEqual([
        'run_id',
        'session_id',
        'timestamp_ms',
        ...labelKeys,
        'sequence',
        'session_sequence',
      ]);
      expect(Object.keys(direct.metadata)).toEqual(['session_id', 'timestamp_ms', ...labelKeys, 'session_sequence']);
      expect(first.metadata).toMatchObject({
        run_id: 'r1',
        session_id: 's1',
        timestamp_ms: 1_796_168_731_823,
        sequence: 0,
        session_sequence: 1,
      });
      expect(live.map((e) => e.metadata.timestamp_ms)).toEqual(
        [0, 0, 2 ** 33, 2 ** 33, -(2 ** 33), -(2 ** 33) + 1].map((d) => 1_796_168_731_823 + d),
      );
    });
  }

  it('writes the documented wire shape of an event', () => {
    const log = new SessionEventLog(roomy);
    const { emit } = emitter(log, FULL_LABELS);
    emit('r1', 'text_delta', { text: 'a' });
    emit(undefined, 'checkpoint_saved', { turn: 1, store: 'memory' });
    expect(json(log.read(0, 10))).toEqual([
      '{"version":1,"type":"text_delta","payload":{"text":"a"},"metadata":{"run_id":"r1","session_id":"s1","timestamp_ms":1796168731823,"tenant_id":"t1","principal":"alice","agent_template_id":"reviewer","correlation_id":"corr-9","sequence":0,"session_sequence":1}}',
      '{"version":1,"type":"checkpoint_saved","payload":{"turn":1,"store":"memory"},"metadata":{"session_id":"s1","timestamp_ms":1796168731823,"tenant_id":"t1","principal":"alice","agent_template_id":"reviewer","correlation_id":"corr-9","session_sequence":2}}',
    ]);
  });

  it('builds no envelope for an event nobody follows, and one shared by every listener and the cluster stream otherwise', () => {
    const log = new SessionEventLog(roomy);
    const origin = new EventOrigin('r1', 's1', {});
    expect(log.record(origin, 'text_delta', { text: 'a' }, 5)).toBeUndefined();
    expect(log.record(origin, 'text_delta', { text: 'b' }, 6, true)?.metadata).toEqual({
      run_id: 'r1',
      session_id: 's1',
      timestamp_ms: 6,
      sequence: 1,
      session_sequence: 2,
    });
    const seen: EventEnvelope[][] = [[], []];
    log.listen((e) => seen[0].push(e));
    log.listen((e) => seen[1].push(e));
    const stamped = log.record(origin, 'text_delta', { text: 'c' }, 7);
    expect(stamped).toBeDefined();
    expect(seen[0]).toEqual([stamped]);
    expect(seen[1][0]).toBe(seen[0][0]);
    expect(log.size).toBe(3);

    // In a cluster the emitter publishes the envelope the listeners got; once abandoned, nothing.
    const published: EventEnvelope[] = [];
    const clustered: SessionOwnership = {
      ...createLocalOwnership('n1'),
      clustered: true,
      publish: (_key, e) => published.push(e),
    };
    let gone = false;
    const quiet = new SessionEventLog(roomy);
    const { emit } = emitter(quiet, FULL_LABELS, clustered, () => gone);
    emit('r1', 'agent_start', { prompt: 'hi', model: 'openai/m', side_question: false });
    const followed: EventEnvelope[] = [];
    quiet.listen((e) => followed.push(e));
    emit('r1', 'text_delta', { text: 'a' });
    gone = true;
    emit('r1', 'text_delta', { text: 'b' });
    expect(published).toHaveLength(2);
    expect(published[1]).toBe(followed[0]);
    expect(json(published)).toEqual(json(quiet.read(0, 2)));
  });

  it('stamps events appended with metadata in any key order in wire order', () => {
    const log = new SessionEventLog(roomy);
    const e = log.append({
      version: 1,
      type: 'x',
      payload: {},
      metadata: { correlation_id: 'c', timestamp_ms: 3, session_id: 's', run_id: 'r', tenant_id: 't' },
    });
    expect(JSON.stringify(e.metadata)).toBe(
      '{"run_id":"r","session_id":"s","timestamp_ms":3,"tenant_id":"t","correlation_id":"c","sequence":0,"session_sequence":1}',
    );
    expect(json(log.read(0, 1))).toEqual([JSON.stringify(e)]);
  });

  it('keeps timestamps exactly, whatever the clock returns', () => {
    const log = new SessionEventLog(roomy);
    const stamps = [1_796_168_731_823, 0, 1.5, Number.MAX_SAFE_INTEGER, -3, 2 ** 31 + 7, 1e300];
    for (const t of stamps)
      log.append({ version: 1, type: 'x', payload: {}, metadata: { run_id: 'r', session_id: 's', timestamp_ms: t } });
    expect(log.read(0, 100).map((e) => e.metadata.timestamp_ms)).toEqual(stamps);
    expect(log.read(0, 100).map((e) => e.metadata.sequence)).toEqual(stamps.map((_, i) => i));
  });

  it('keeps restored events verbatim: other labels and unknown metadata keys read back as they went in', () => {
    const trace = [
      {
        version: 1,
        type: 'agent_start',
        payload: { prompt: 'p' },
        metadata: {
          session_sequence: 4,
          run_id: 'r1',
          sequence: 3,
          session_id: 's1',
          timestamp_ms: 10,
          tenant_id: 'other',
          team: 'blue',
          extra: { nested: [1, 2] },
        },
      },
      {
        version: 1,
        type: 'custom_event',
        payload: { any: true },
        metadata: { session_id: 's1', timestamp_ms: 11, session_sequence: 5, node: 'n2' },
      },
      {
        version: 1,
        type: 'session_closed',
        payload: {},
        metadata: { session_id: 's1', session_sequence: 6, timestamp_ms: 12 },
      },
    ] as EventEnvelope[];
    const texts = json(trace);
    const log = new SessionEventLog(roomy, 6);
    log.restore(structuredClone(trace));
    expect(json(log.read(0, 10))).toEqual(texts);
    expect(json(log.retained(10))).toEqual(texts);
    expect(json(log.trace(4, 10, 10))).toEqual(texts.slice(1));
    expect(json(log.runPage('r1', -1, 10)?.events ?? [])).toEqual(texts.slice(0, 1));
    expect(log.runCounts('r1')).toEqual({ total: 4, firstRetained: 3 });
    // A restored session_closed replays; this life's own ends subscriptions.
    const [, , closed] = log.read(0, 10);
    expect(log.ends(closed)).toBe(false);
    const { emit } = emitter(log, {});
    emit('r1', 'text_delta', { text: 'more' });
    emit(undefined, 'session_closed', { reason: 'closed' });
    const [, own] = log.read(6, 10);
    expect(log.ends(own)).toBe(true);
    expect(log.read(6, 10).map((e) => [e.metadata.sequence, e.metadata.session_sequence])).toEqual([
      [4, 7],
      [undefined, 8],
    ]);
    expect(json(log.read(0, 3))).toEqual(texts);
  });

  it('keeps a session_sequence a restored trace repeats once', () => {
    const event = (sessionSequence: number, text: string): EventEnvelope => ({
      version: 1,
      type: 'text_delta',
      payload: { text },
      metadata: {
        run_id: 'r1',
        session_id: 's1',
        timestamp_ms: 1,
        sequence: sessionSequence - 1,
        session_sequence: sessionSequence,
      },
    });
    const log = new SessionEventLog(roomy, 2);
    log.restore([event(1, 'a'), event(2, 'b'), event(2, 'again')]);
    expect(log.read(0, 10).map((e) => e.payload.text)).toEqual(['a', 'b']);
    expect(log.size).toBe(2);
    expect(log.runCounts('r1')).toEqual({ total: 2, firstRetained: 0 });
  });

  it('releases the payload of an event as soon as retention drops it', async () => {
    const gc = collector();
    const log = new SessionEventLog({ maxEventsPerRun: 2, maxRuns: 10, maxSessionEvents: 1 });
    const { emit } = emitter(log, FULL_LABELS);
    // Each payload is referenced by the log only (no listener, so no envelope was built); they are made
    // in a function of their own, so no register of this (suspended) test holds one.
    const emitAll = (runId: string | undefined, n: number) =>
      Array.from({ length: n }, (_, i) => {
        const payload = { text: `t${i}` };
        emit(runId, 'text_delta', payload);
        return new WeakRef(payload);
      });
    const runRefs = emitAll('r1', 3);
    const directRefs = emitAll(undefined, 2);
    const droppedRunRefs = emitAll('r2', 2);
    log.dropRun('r2');
    // Let the current job end (a WeakRef keeps its target alive until then), then collect.
    await new Promise((resolve) => setTimeout(resolve, 0));
    gc();
    expect(runRefs.map((r) => r.deref() !== undefined)).toEqual([false, true, true]);
    expect(directRefs.map((r) => r.deref() !== undefined)).toEqual([false, true]);
    expect(droppedRunRefs.map((r) => r.deref() !== undefined)).toEqual([false, false]);
    expect(log.size).toBe(3);
    expect(log.read(0, 10).map((e) => e.payload.text)).toEqual(['t1', 't2', 't1']);
    expect(log.replay(0).gap).toEqual({ after: 0, firstAvailable: 2 });
  });

  it('applies retention and reports gaps on the emitter path as on append', () => {
    const log = new SessionEventLog({ maxEventsPerRun: 3, maxRuns: 10, maxSessionEvents: 2 });
    const { emit } = emitter(log, {});
    for (let i = 0; i < 5; i += 1) emit('r1', 'text_delta', { text: `${i}` }); // 1..5, retains 3..5
    for (let i = 0; i < 3; i += 1) emit(undefined, 'text_delta', { text: `d${i}` }); // 6..8, retains 7..8
    emit('r1', 'turn_start', { turn: 1 }); // 9, drops 3
    expect(log.read(0, 100).map((e) => e.metadata.session_sequence)).toEqual([4, 5, 7, 8, 9]);
    expect(log.replay(0).gap).toEqual({ after: 0, firstAvailable: 4 });
    expect(log.replay(5).gap).toEqual({ after: 5, firstAvailable: 7 });
    const page = log.runPage('r1', -1, 2);
    expect(page?.events.map((e) => e.metadata.sequence)).toEqual([3, 4]);
    expect(page?.retentionGap).toEqual({ firstAvailableSequence: 3 });
    expect(page?.nextAfter).toBe(4);
    expect(log.runCounts('r1')).toEqual({ total: 6, firstRetained: 3 });
    log.dropRun('r1');
    expect(log.read(0, 100).map((e) => e.metadata.session_sequence)).toEqual([7, 8]);
    expect(log.size).toBe(2);
  });
});
