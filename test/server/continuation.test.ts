import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { CONTINUATION_PROMPT } from '../../src/runtime/prompt/system-prompt.js';
import { FINISHED_ANSWERS, UNFINISHED_ANSWERS } from '../support/continuation-vectors.js';
import { createSession, ofType, runAndWait, runEvents, useTestServers } from '../support/run-helpers.js';

const start = useTestServers();
const readA = { name: 'read', arguments: { file_path: 'a.txt' } };

describe('continuation (on by default, as in the seed): an answer that looks unfinished is continued', () => {
  it('the seed defaults: continuationEnabled true, maxContinuationTurns 3, duplicateToolCallThreshold 3', async () => {
    const t = await start();
    const id = await createSession(t);
    const session = t.server.ctx.agent
      .listSessions({ principal: 'x', tenantId: 'default', scopes: new Set(['admin']) } as never)
      .find((s) => s.id === id);
    expect(session?.config.governance).toMatchObject({
      continuationEnabled: true,
      maxContinuationTurns: 3,
      duplicateToolCallThreshold: 3,
    });
  });

  it('an answer to tool results that announces a next step gets the continuation prompt; the run answers with what follows', async () => {
    const t = await start({ files: { 'a.txt': 'A\n' } });
    const id = await createSession(t);
    for (const announcement of UNFINISHED_ANSWERS) {
      const before = t.fake.requests.length;
      t.fake.script({ toolCalls: [{ id: 'c1', ...readA }] }, { text: announcement }, { text: 'The file says A.' });
      const { result, runId } = await runAndWait(t, id, 'what is in a.txt?');
      expect(result.text, announcement).toBe('The file says A.');
      const sent = t.fake.requests.slice(before);
      expect(sent, announcement).toHaveLength(3);
      expect(sent[2].body.messages.at(-1)).toEqual({ role: 'user', content: CONTINUATION_PROMPT });
      const injected = ofType(await runEvents(t, id, runId), 'continuation_injected');
      expect(injected.map((e) => e.payload.reason)).toEqual(['announces_next_step']);
    }
    t.fake.assertDone();
  });

  it('an answer that gives a result is not continued (one request after the tool round)', async () => {
    const t = await start({ files: { 'a.txt': 'A\n' } });
    const id = await createSession(t);
    for (const answer of FINISHED_ANSWERS) {
      const before = t.fake.requests.length;
      t.fake.script({ toolCalls: [{ id: 'c1', ...readA }] }, { text: answer });
      const { result, runId } = await runAndWait(t, id, 'what is in a.txt?');
      expect(result.text).toBe(answer);
      expect(t.fake.requests.length - before, answer).toBe(2);
      expect(ofType(await runEvents(t, id, runId), 'continuation_injected')).toEqual([]);
    }
    t.fake.assertDone();
  });

  it('an empty answer to tool results is continued; an empty answer to the user is not', async () => {
    const t = await start({ files: { 'a.txt': 'A\n' } });
    const id = await createSession(t);
    t.fake.script({ toolCalls: [{ id: 'c1', ...readA }] }, {}, { text: 'It says A.' });
    const { result, runId } = await runAndWait(t, id, 'read a.txt');
    expect(result.text).toBe('It says A.');
    const injected = ofType(await runEvents(t, id, runId), 'continuation_injected');
    expect(injected.map((e) => e.payload.reason)).toEqual(['empty_after_tools']);

    t.fake.script({});
    const quiet = await runAndWait(t, id, 'say nothing');
    expect(quiet.run.status).toBe('completed');
    expect(ofType(await runEvents(t, id, quiet.runId), 'continuation_injected')).toEqual([]);
    t.fake.assertDone();
  });

  it('at most maxContinuationTurns continuations, then the run completes with the last answer; continuationEnabled false never continues', async () => {
    const t = await start({ files: { 'a.txt': 'A\n' } });
    const id = await createSession(t, { maxContinuationTurns: 2 });
    t.fake.script(
      { toolCalls: [{ id: 'c1', ...readA }] },
      { text: 'Let me check the file.' },
      { text: 'Let me check it again.' },
      { text: 'Let me look once more.' },
    );
    const { result, runId, run } = await runAndWait(t, id, 'read a.txt');
    expect(run.status).toBe('completed');
    expect(result.text).toBe('Let me look once more.');
    expect(ofType(await runEvents(t, id, runId), 'continuation_injected')).toHaveLength(2);

    const off = await createSession(t, { continuationEnabled: false });
    t.fake.script({ toolCalls: [{ id: 'c2', ...readA }] }, { text: 'Let me check the file.' });
    const stopped = await runAndWait(t, off, 'read a.txt');
    expect(stopped.result.text).toBe('Let me check the file.');
    t.fake.assertDone();
  });

  it('duplicateToolCallThreshold defaults to 3: a fourth identical call in a row is not run', async () => {
    const t = await start({ files: { 'a.txt': 'A\n' } });
    const id = await createSession(t);
    t.fake.script(...[1, 2, 3, 4].map((n) => ({ toolCalls: [{ id: `d${n}`, ...readA }] })), { text: 'Understood.' });
    const { runId } = await runAndWait(t, id, 'read a lot');
    const events = await runEvents(t, id, runId);
    expect(ofType(events, 'tool_execution_start').map((e) => e.payload.id)).toEqual(['d1', 'd2', 'd3']);
    const seen = t.fake.requests[4].body.messages.at(-1);
    expect(String(seen?.content)).toContain('duplicateToolCallThreshold 3');
    t.fake.assertDone();
    expect((await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session.id).toBe(id);
  });
});
