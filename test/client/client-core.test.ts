import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import {
  A3sClient,
  A3sError,
  CancelledError,
  SessionBusyError,
  SessionNotFoundError,
  ValidationError,
  type AgentEvent,
  type SessionOptionsInput,
} from '../../src/client/index.js';
import { findFreePorts } from '../support/free-ports.js';
import { useTestServers } from '../support/run-helpers.js';

describe('the typed client: send, stream, history, runs, cancel and typed errors against a real server', () => {
  const start = useTestServers();

  it('send answers the AgentResult; stream yields the run from agent_start to agent_end (next() and for-await)', async () => {
    const t = await start({ files: { 'a.txt': 'alpha\n' } });
    const client = new A3sClient({ baseUrl: t.url, WebSocket });
    const session = await client.session(t.root);
    expect(session.sessionId).toMatch(/.+/);
    expect(session.workspace).toBe(t.root);

    t.fake.script({ text: 'hello there', usage: { prompt_tokens: 5, completion_tokens: 2 } });
    const result = await session.send('hi');
    expect(result).toMatchObject({
      text: 'hello there',
      toolCallsCount: 0,
      promptTokens: 5,
      completionTokens: 2,
      totalTokens: 7,
      verificationStatus: 'skipped',
    });

    // stream() with next(): every event of the run, in session order, ending with agent_end then null.
    t.fake.script(
      { toolCalls: [{ id: 'c1', name: 'read', arguments: { file_path: 'a.txt' } }] },
      { text: 'read it', chunks: 3 },
    );
    const stream = await session.stream('read a.txt');
    const seen: AgentEvent[] = [];
    for (let event = await stream.nextEvent(); event !== null; event = await stream.nextEvent()) seen.push(event);
    expect(await stream.nextEvent()).toBeNull();
    expect(seen[0].type).toBe('agent_start');
    expect(seen[0].prompt).toBe('read a.txt');
    expect(seen.at(-1)?.type).toBe('agent_end');
    expect(seen.at(-1)?.text).toBe('read it');
    expect(seen.every((e) => e.metadata.run_id === stream.runId)).toBe(true);
    const sequences = seen.map((e) => Number(e.metadata.session_sequence));
    expect(sequences).toEqual(sequences.map((_, i) => sequences[0] + i));
    const toolEnd = seen.find((e) => e.type === 'tool_end');
    expect(toolEnd).toMatchObject({ toolId: 'c1', toolName: 'read', exitCode: 0 });
    expect(toolEnd?.toolOutput).toContain('alpha');
    expect(
      seen
        .filter((e) => e.type === 'text_delta')
        .map((e) => e.text)
        .join(''),
    ).toBe('read it');
    expect(JSON.parse(seen[0].payloadJson)).toEqual(seen[0].payload);
    // The same events as the run's REST page, none missing and none twice.
    const rest = await session.runEvents(String(stream.runId));
    expect(seen.map((e) => e.metadata.session_sequence)).toEqual(rest.map((e) => e.metadata.session_sequence));

    // for-await over a second stream.
    t.fake.script({ text: 'third' });
    const types: string[] = [];
    for await (const event of await session.stream('again')) types.push(event.type);
    expect(types[0]).toBe('agent_start');
    expect(types.at(-1)).toBe('agent_end');

    const history = await session.history();
    expect(history.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['hi', 'read a.txt', 'again']);
    const runs = await session.runs();
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect((await session.runSnapshot(runs[1].runId)).input).toBe('read a.txt');
    expect(await session.currentRun()).toBeNull();
    expect(await session.cancel()).toBe(false);
    expect(await session.cancelRun(runs[0].runId)).toBe(false);
    expect((await session.traceEvents({ after: 0, limit: 1 }))[0].metadata.session_sequence).toBe(1);
    // events({follow: false}) replays the retained log and ends.
    const replayed = await session.events({ after: 0, follow: false, runId: runs[0].runId }).collect();
    expect(replayed[0].type).toBe('agent_start');
    expect(replayed.at(-1)?.type).toBe('agent_end');
    expect(await client.listSessions()).toContain(session.sessionId);
    expect(await session.save()).toBeGreaterThan(0);
    expect(await session.close()).toBe(true);
    expect(await client.closeSession(session.sessionId)).toBe(false);
    t.fake.assertDone();
  });

  it('SESSION_BUSY for a second send while a run is active; cancel ends the stream; side questions keep the transcript', async () => {
    const t = await start();
    const client = new A3sClient({ baseUrl: t.url, WebSocket });
    const session = await client.session(t.root);
    t.fake.script({ text: 'slow answer', chunks: 10, chunkDelayMs: 100 });
    const stream = await session.stream('long one');
    expect((await stream.nextEvent())?.type).toBe('agent_start');
    const busy = await session.send('second').catch((error: unknown) => error);
    expect(busy).toBeInstanceOf(SessionBusyError);
    expect(busy).toBeInstanceOf(A3sError);
    expect(busy).toMatchObject({ code: 'SESSION_BUSY', status: 409 });
    expect((await session.currentRun())?.id).toBe(stream.runId);
    expect(await session.cancel()).toBe(true);
    const rest = await stream.collect();
    const end = rest.at(-1);
    if (end?.type !== 'agent_end') throw new Error(`the stream ended with ${end?.type}, not agent_end`);
    expect(end.payload.status).toBe('cancelled');
    expect((await session.runSnapshot(String(stream.runId))).status).toBe('cancelled');

    // A cancelled send rejects with the run's typed error (CancelledError, details name the run).
    t.fake.script({ text: 'cancel me please', chunks: 10, chunkDelayMs: 100 });
    const sending = session.send('to be cancelled').catch((error: unknown) => error);
    for (let i = 0; i < 200 && (await session.currentRun()) === null; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await session.cancel()).toBe(true);
    const cancelled = await sending;
    expect(cancelled).toBeInstanceOf(CancelledError);
    expect((cancelled as CancelledError).details).toMatchObject({ status: 'cancelled' });

    t.fake.script({ text: 'side answer' });
    const side = await session.send('a side question', [{ role: 'user', content: 'context' }]);
    expect(side.text).toBe('side answer');
    expect((await session.history()).some((m) => m.content === 'a side question')).toBe(false);
    t.fake.assertDone();
  });

  it('typed errors: unknown session -> SessionNotFoundError, bad option -> ValidationError naming the field, Idempotency-Key', async () => {
    const t = await start();
    const client = new A3sClient({ baseUrl: t.url, WebSocket });
    const missing = await client.getSession('no-such-session').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(SessionNotFoundError);
    expect(missing).toMatchObject({ code: 'SESSION_NOT_FOUND', status: 404 });
    const bad = await client
      .session(t.root, { maxToolRounds: 'many' } as unknown as SessionOptionsInput)
      .catch((error: unknown) => error);
    expect(bad).toBeInstanceOf(ValidationError);
    expect((bad as ValidationError).status).toBe(400);
    expect((bad as ValidationError).message).toContain('maxToolRounds');
    const typo = await client
      .session(t.root, { maxToolRound: 3 } as unknown as SessionOptionsInput)
      .catch((error: unknown) => error);
    expect((typo as ValidationError).message).toContain('maxToolRound');

    const session = await client.session(t.root);
    t.fake.script({ text: 'once' });
    const first = await session.startRun('idempotent', { idempotencyKey: 'key-1', wait: true });
    const again = await session.startRun('idempotent', { idempotencyKey: 'key-1', wait: true });
    expect(again.runId).toBe(first.runId);
    expect(again.existing).toBe(true);
    const badKey = await session.startRun('x', { idempotencyKey: 'has space' }).catch((error: unknown) => error);
    expect(badKey).toBeInstanceOf(ValidationError);
    expect((badKey as ValidationError).details.field).toBe('Idempotency-Key');
    const emptyInput = await session.send('').catch((error: unknown) => error);
    expect((emptyInput as ValidationError).message).toContain('input');
    // No WebSocket given and none global (Node 20): the client imports `ws` by itself (without it installed, the
    // stream fails with ValidationError naming the option: test/client/client-package.test.ts).
    const noSocket = await new A3sClient({ baseUrl: t.url, WebSocket: undefined }).getSession(session.sessionId);
    t.fake.script({ text: 'streamed without a WebSocket option' });
    const streamed: string[] = [];
    for await (const event of await noSocket.stream('x')) streamed.push(event.type);
    expect(streamed.at(-1)).toBe('agent_end');
    const [closedPort] = await findFreePorts(1);
    const unreachable = await new A3sClient({ baseUrl: `http://127.0.0.1:${closedPort}` })
      .health()
      .catch((error: unknown) => error);
    expect(unreachable).toMatchObject({
      code: 'NETWORK_ERROR',
      name: 'NetworkError',
      details: { cause: 'ECONNREFUSED' },
    });
    expect((unreachable as Error).message).toBe(
      `GET http://127.0.0.1:${closedPort}/healthz: the server could not be reached (ECONNREFUSED)`,
    );
    // The seed's sessionForAgent(workspace, agent, workers, options): the workers are specs (worker-agents.test.ts).
    const workers = await client
      .sessionForAgent(t.root, 'explore', ['worker-a' as never])
      .catch((error: unknown) => error);
    expect(workers).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect((workers as Error).message).toContain('body.workerAgents.0');
    expect((await client.sessionInfos()).map((info) => info.id)).toContain(session.sessionId);
    expect((await client.health()).status).toBe('ok');
    t.fake.assertDone();
  });
});
