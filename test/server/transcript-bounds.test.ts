import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider, type RecordedRequest } from '../support/fake-provider.js';
import { createSession, history, ofType, runAndWait, runEvents } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const isSummary = (r: RecordedRequest): boolean =>
  (r.body.tools ?? []).length === 0 && JSON.stringify(r.body.messages[0]).includes('compaction');

describe('bounded transcripts: limits.maxTranscriptBytes / maxTranscriptMessages and the model context window', () => {
  let fake: FakeProvider;
  let t: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer({ fake, config: { limits: { maxTranscriptBytes: 6000, maxTranscriptMessages: 8 } } });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('past the byte bound without autoCompact the run fails TRANSCRIPT_TOO_LARGE before any provider call and the transcript is unchanged', async () => {
    const id = await createSession(t);
    fake.script({ text: 'ok' });
    await runAndWait(t, id, 'x'.repeat(4000));
    const before = await history(t, id);
    const calls = fake.requests.length;
    const refused = await runAndWait(t, id, 'y'.repeat(3000));
    expect(refused.run.status).toBe('failed');
    expect(refused.run.error).toMatchObject({
      code: 'TRANSCRIPT_TOO_LARGE',
      message: expect.stringContaining('limits.maxTranscriptBytes (6000)'),
    });
    expect(fake.requests.length).toBe(calls);
    expect(await history(t, id)).toEqual(before);
    const events = await runEvents(t, id, refused.runId);
    expect(ofType(events, 'error')[0]?.payload).toMatchObject({ code: 'TRANSCRIPT_TOO_LARGE' });
    expect(ofType(events, 'turn_start')).toHaveLength(0);
    fake.assertDone();
  });

  it('past the message bound the same rule applies', async () => {
    const id = await createSession(t);
    fake.script(
      { toolCalls: [{ id: 'l1', name: 'ls', arguments: {} }] },
      { toolCalls: [{ id: 'l2', name: 'ls', arguments: {} }] },
      { toolCalls: [{ id: 'l3', name: 'ls', arguments: {} }] },
      { text: 'listed' },
    );
    await runAndWait(t, id, 'list thrice');
    expect((await history(t, id)).length).toBe(8);
    const refused = await runAndWait(t, id, 'again');
    expect(refused.run.error?.code).toBe('TRANSCRIPT_TOO_LARGE');
    expect(refused.run.error?.message).toContain('limits.maxTranscriptMessages (8)');
    fake.assertDone();
  });

  it('with autoCompact a transcript past its bound is compacted first (whatever the threshold), then the turn goes out', async () => {
    const id = await createSession(t, { autoCompact: true });
    fake.script({ text: 'first' });
    await runAndWait(t, id, 'a'.repeat(2500));
    fake.script({ text: 'second' });
    await runAndWait(t, id, 'b'.repeat(2500));
    const base = fake.requests.length;
    fake.script(
      { text: 'SUMMARY of a and b', expect: (r) => expect(isSummary(r)).toBe(true) },
      { text: 'third', expect: (r) => expect(JSON.stringify(r.body.messages)).toContain('SUMMARY of a and b') },
    );
    const done = await runAndWait(t, id, 'c'.repeat(1500));
    expect(done.run.status).toBe('completed');
    expect(fake.requests.length - base).toBe(2);
    const events = await runEvents(t, id, done.runId);
    expect(ofType(events, 'context_compacted')).toHaveLength(1);
    // The compaction happened far below the 0.8 threshold of the 200k default window.
    expect(ofType(events, 'context_compacted')[0]?.payload.percent_before as number).toBeLessThan(0.1);
    expect(JSON.stringify(await history(t, id))).not.toContain('a'.repeat(2500));
    fake.assertDone();
  });

  it("no provider request goes out past the model's context window: CONTEXT_LIMIT_EXCEEDED, the transcript unchanged", async () => {
    // Default transcript bounds here: only the window decides.
    const wide = await startTestServer({ fake });
    try {
      const id = await createSession(wide, { maxContextTokens: 8000 });
      const calls = fake.requests.length;
      const refused = await runAndWait(wide, id, 'z'.repeat(40_000));
      expect(refused.run.error).toMatchObject({
        code: 'CONTEXT_LIMIT_EXCEEDED',
        message: expect.stringContaining('maxContextTokens 8000'),
      });
      expect(fake.requests.length).toBe(calls);
      expect(await history(wide, id)).toEqual([]);
      // A tool result that overflows the window stops the run before the next request.
      fake.script({
        toolCalls: [{ id: 'r1', name: 'bash', arguments: { command: 'head -c 40000 /dev/zero | tr "\\0" q' } }],
      });
      const grown = await runAndWait(wide, id, 'print a lot');
      expect(grown.run.error?.code).toBe('CONTEXT_LIMIT_EXCEEDED');
      expect(fake.requests.length).toBe(calls + 1);
      fake.assertDone();
    } finally {
      await wide.close();
    }
  });
});
