import { readFileSync } from 'node:fs';
import request from 'supertest';
import { afterEach } from 'vitest';
import type { ChatMessage } from '../../src/protocol/chat-message.js';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import type { AgentResult, RunRecord } from '../../src/protocol/run-record.js';
import { startTestServer, type TestServer, type TestServerOptions } from './test-server.js';

/** The body of `POST /v1/sessions/:id/runs` with `wait: true`. */
export interface FinishedRun {
  runId: string;
  run: RunRecord;
  result: AgentResult;
}

/**
 * Register an afterEach that closes every server started in the test, and return the function that
 * starts them; call it at the top of a test file or of a describe block.
 */
export function useTestServers(): (options?: TestServerOptions) => Promise<TestServer> {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  return async (options: TestServerOptions = {}) => {
    const t = await startTestServer(options);
    servers.push(t);
    return t;
  };
}

/** Create a session over HTTP and return its id. */
export async function createSession(t: TestServer, options: Record<string, unknown> = {}): Promise<string> {
  const res = await request(t.url).post('/v1/sessions').send(options).expect(201);
  return (res.body as { session: { id: string } }).session.id;
}

/** Start a run without waiting for it and return its id. */
export async function startRun(t: TestServer, sessionId: string, input: string): Promise<string> {
  const res = await request(t.url).post(`/v1/sessions/${sessionId}/runs`).send({ input }).expect(202);
  return (res.body as { runId: string }).runId;
}

/** Run `input` to the end (`wait: true`) and return the finished run. */
export async function runAndWait(t: TestServer, sessionId: string, input: string): Promise<FinishedRun> {
  const res = await request(t.url).post(`/v1/sessions/${sessionId}/runs`).send({ input, wait: true }).expect(200);
  return res.body as FinishedRun;
}

/** The run's current record. */
export async function getRun(t: TestServer, sessionId: string, runId: string): Promise<RunRecord> {
  const res = await request(t.url).get(`/v1/sessions/${sessionId}/runs/${runId}`).expect(200);
  return (res.body as { run: RunRecord }).run;
}

/** Every retained event of a run, page after page. */
export async function runEvents(t: TestServer, sessionId: string, runId: string): Promise<EventEnvelope[]> {
  const all: EventEnvelope[] = [];
  for (let after = -1; ;) {
    const res = await request(t.url)
      .get(`/v1/sessions/${sessionId}/runs/${runId}/events?after=${after}&limit=1000`)
      .expect(200);
    const page = res.body as { events: EventEnvelope[]; nextAfter: number | null };
    all.push(...page.events);
    if (page.events.length === 0 || page.nextAfter === null) return all;
    after = page.nextAfter;
  }
}

/** The session's transcript. */
export async function history(t: TestServer, sessionId: string): Promise<ChatMessage[]> {
  const res = await request(t.url).get(`/v1/sessions/${sessionId}/history`).expect(200);
  return (res.body as { messages: ChatMessage[] }).messages;
}

/** The content of the tool message the fake provider was sent for a call id (what the model saw). */
export function toolMessage(t: TestServer, callId: string): string {
  for (const req of t.fake.requests) {
    const found = (req.body.messages as ChatMessage[]).find((m) => m.role === 'tool' && m.tool_call_id === callId);
    if (found) return String(found.content);
  }
  throw new Error(`no tool message for ${callId}`);
}

/** The events of one type, in order. */
export function ofType(events: EventEnvelope[], type: string): EventEnvelope[] {
  return events.filter((e) => e.type === type);
}

/** Poll `check` (sync or async) every 25 ms until it returns true, failing after `timeoutMs`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** True while a process exists and is not a zombie waiting to be reaped. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}
