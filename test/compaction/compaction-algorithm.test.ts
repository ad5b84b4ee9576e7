import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/protocol/chat-message.js';
import { AutoCompactor } from '../../src/runtime/compaction/auto-compactor.js';
import { contextTokens, estimateMessageTokens } from '../../src/runtime/compaction/estimate-tokens.js';
import { renderTranscript } from '../../src/runtime/compaction/render-transcript.js';
import { splitForCompaction } from '../../src/runtime/compaction/split-for-compaction.js';
import { createInvocationContext, type GovernanceSnapshot } from '../../src/runtime/invocation/invocation-context.js';
import type { HostEnv } from '../../src/runtime/ports/host-env.js';

const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string, ...calls: string[]): ChatMessage => ({
  role: 'assistant',
  content,
  ...(calls.length
    ? {
        tool_calls: calls.map((id) => ({ id, type: 'function' as const, function: { name: 'read', arguments: '{}' } })),
      }
    : {}),
});
const tool = (id: string, content = 'ok'): ChatMessage => ({ role: 'tool', tool_call_id: id, content });

describe('the token estimator', () => {
  it('counts utf8 bytes / 4 of contents and tool calls, rounded up', () => {
    expect(estimateMessageTokens([user('abcd')])).toBe(1);
    expect(estimateMessageTokens([user('abcde')])).toBe(2);
    // "é" is 2 bytes, "😀" 4.
    expect(estimateMessageTokens([user('éé😀')])).toBe(2);
    expect(estimateMessageTokens([assistant('', 'x')])).toBe(Math.ceil(('read'.length + 2) / 4));
  });

  it('adds the estimate of messages after the provider-reported ones', () => {
    const messages = [user('a'.repeat(400)), assistant('b'.repeat(400)), tool('t', 'c'.repeat(40))];
    expect(contextTokens(messages, { reportedTokens: 0, reportedMessages: 0 })).toBe(210);
    expect(contextTokens(messages, { reportedTokens: 1000, reportedMessages: 2 })).toBe(1010);
  });
});

describe('splitting a transcript for compaction', () => {
  it('keeps the last min(20, n/2) messages, moving the cut back to the assistant message of tool results', () => {
    const messages = [user('q'), assistant('', 'a', 'b', 'c'), tool('a'), tool('b'), tool('c'), assistant('done')];
    // n = 6: keep 3 would start at tool b; the cut moves to the assistant holding the calls.
    const { older, kept } = splitForCompaction(messages, 1_000_000);
    expect(older).toEqual([user('q')]);
    expect(kept[0]?.role).toBe('assistant');
    expect(kept).toHaveLength(5);
    const long = Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? user(`u${i}`) : assistant(`a${i}`)));
    expect(splitForCompaction(long, 1_000_000).kept).toHaveLength(20);
  });

  it('drops whole turns from the front of the kept part until it fits, never leaving a tool result first', () => {
    const big = 'x'.repeat(4000);
    const messages = [
      user('q1'),
      assistant('a1'),
      user('q2'),
      assistant('', 't1'),
      tool('t1', big),
      assistant('', 't2'),
      tool('t2', 'small'),
      assistant('end'),
    ];
    const { older, kept } = splitForCompaction(messages, 100);
    expect(kept.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant']);
    expect(older).toHaveLength(5);
    expect(splitForCompaction(messages, 0).kept).toEqual([]);
  });
});

describe('rendering the summarised part', () => {
  it('elides the middle of a long transcript and of a long message, keeping both ends', () => {
    const messages = Array.from({ length: 200 }, (_, i) => user(`message number ${i} ${'z'.repeat(100)}`));
    const text = renderTranscript(messages, 3000);
    expect(text.length).toBeLessThan(3200);
    expect(text).toContain('message number 0 ');
    expect(text).toContain('message number 199 ');
    expect(text).toMatch(/messages of the middle of the conversation elided/);
    const one = renderTranscript([user(`start${'m'.repeat(10_000)}end`)], 2000);
    expect(one).toContain('start');
    expect(one).toContain('end');
    expect(one).toContain('characters elided');
  });
});

describe('AutoCompactor', () => {
  const governance: GovernanceSnapshot = {
    maxToolRounds: 50,
    maxParseRetries: 2,
    toolTimeoutMs: 0,
    circuitBreakerThreshold: 3,
    duplicateToolCallThreshold: 3,
    continuationEnabled: true,
    maxContinuationTurns: 3,
    maxExecutionTimeMs: 60_000,
    toolOutputBytes: 100_000,
    autoCompact: true,
    autoCompactThreshold: 0.8,
    maxContextTokens: 1000,
    maxTranscriptBytes: 8_388_608,
    maxTranscriptMessages: 10_000,
  };
  const hostEnv = { now: () => 0, newId: (p: string) => `${p}_1` } as unknown as HostEnv;
  const events: string[] = [];
  const ctx = createInvocationContext({
    runId: 'run_1',
    sessionId: 's',
    workspace: '/',
    signal: new AbortController().signal,
    emit: (type) => events.push(type),
    governance,
    hostEnv,
  });

  it('compacts past the threshold; a refusing model is not asked again until the context grew by 10% of the window', async () => {
    const answers = ['', 'the summary'];
    let calls = 0;
    const compactor = new AutoCompactor({
      llm: {
        complete: async () => ({
          text: answers[calls++] ?? 'x',
          usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
        }),
      },
      hooks: () => undefined,
    });
    const messages: ChatMessage[] = [
      { role: 'system', content: 'sys' },
      user('q'),
      assistant('a'),
      user('q2'),
      assistant('a2'),
    ];
    expect(await compactor.compact(messages, { reportedTokens: 100, reportedMessages: 5 }, ctx)).toBeUndefined();
    expect(calls).toBe(0);
    // Over the threshold: the model refuses (empty summary), nothing changes but the call's usage counts and a warning says why.
    expect(await compactor.compact(messages, { reportedTokens: 850, reportedMessages: 5 }, ctx)).toEqual({
      usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
    });
    expect(calls).toBe(1);
    expect(events).toEqual(['run_warning']);
    messages.push(user('q3'));
    // New messages but the context did not grow by 100 tokens: no second summary call.
    expect(await compactor.compact(messages, { reportedTokens: 900, reportedMessages: 6 }, ctx)).toBeUndefined();
    expect(calls).toBe(1);
    messages.push(assistant('a3'));
    const attempt = await compactor.compact(messages, { reportedTokens: 960, reportedMessages: 7 }, ctx);
    expect(attempt?.usage.totalTokens).toBe(2);
    const compacted = attempt?.messages;
    expect(calls).toBe(2);
    expect(compacted?.[0]).toEqual({ role: 'system', content: 'sys' });
    expect(String(compacted?.[1]?.content)).toContain('the summary');
    expect(events).toEqual(['run_warning', 'context_compacted']);
    // The provider still counts the compacted prompt over the threshold (tool specs...): no compaction right after.
    const next = [...compacted!, user('q4')];
    expect(
      await compactor.compact(next, { reportedTokens: 900, reportedMessages: next.length - 1 }, ctx),
    ).toBeUndefined();
    expect(calls).toBe(2);
  });
});
