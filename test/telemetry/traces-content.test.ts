import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeProvider } from '../support/fake-provider.js';
import { tempDir } from '../support/test-server.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';
import { baseEnv, startTracedServer, TRACE_ID, until, type TracedServer } from './traced-server.js';

const open: Array<{ close(): Promise<void> } | TracedServer> = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await ('stop' in item ? item.stop() : item.close());
});

const LEAKED_KEY = 'sk-proj-abcdefghijklmnopqrstuvwx0123456789';
const OTHER_TRACE = '0af7651916cd43dd8448eb211c80319c';

function tracedEnv(receiver: OtlpReceiver): Record<string, string> {
  return { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' };
}

function configFile(text: string): string {
  const file = join(tempDir('a3s-otel-config-'), 'a3s.acl');
  writeFileSync(file, text);
  return file;
}

describe('OpenTelemetry traces: commands, trace ids, captured content and resumed runs', () => {
  it('a sandboxed command is a child of its tool call; agent_end and the request log name the trace', async () => {
    const fake = await startFakeProvider();
    const receiver = await startOtlpReceiver();
    open.push(fake, receiver);
    const config = configFile('log {\n  requests = true\n}\n');
    const server = await startTracedServer(
      { ...baseEnv(fake), ...tracedEnv(receiver) },
      join(tempDir('a3s-otel-log-'), 'imports.log'),
      ['--config', config],
    );
    open.push(server);
    const session = await request(server.url)
      .post('/v1/sessions')
      .send({ permissionPolicy: { allow: ['bash'] } })
      .expect(201);
    const sessionId = session.body.session.id as string;
    fake.script(
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo zebra-command-output' } }] },
      { text: 'ran it' },
    );
    const run = await request(server.url)
      .post(`/v1/sessions/${sessionId}/runs`)
      .set('traceparent', `00-${TRACE_ID}-00f067aa0ba902b7-01`)
      .send({ input: 'run the command', wait: true })
      .expect(200);
    const runId = run.body.runId as string;
    const named = (prefix: string): ReceivedSpan[] => receiver.spans.filter((span) => span.name.startsWith(prefix));
    await until(() => named('invoke_agent').length === 1 && named('sandbox.exec').length >= 1, 'the run span');
    const [tool] = named('execute_tool bash');
    expect(tool?.attributes['a3s.tool.exit_code']).toBe(0);
    const commands = named('sandbox.exec').filter((span) => span.attributes['a3s.sandbox.server_command'] === false);
    expect(commands).toHaveLength(1);
    expect(commands[0]).toMatchObject({
      traceId: TRACE_ID,
      parentSpanId: tool?.spanId,
      attributes: { 'a3s.sandbox.kind': expect.any(String), 'a3s.sandbox.network': expect.any(String) },
    });

    const events = await request(server.url).get(`/v1/sessions/${sessionId}/runs/${runId}/events`).expect(200);
    const end = (events.body.events as Array<{ type: string; metadata: Record<string, unknown> }>).find(
      (event) => event.type === 'agent_end',
    );
    expect(end?.metadata.trace_id).toBe(TRACE_ID);
    const others = (events.body.events as Array<{ type: string; metadata: Record<string, unknown> }>).filter(
      (event) => event.type !== 'agent_end',
    );
    for (const event of others) expect(event.metadata.trace_id).toBeUndefined();

    // The run request's "request completed" line (Fastify's, by its reqId) names the trace.
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; reqId?: string; trace_id?: string; req?: { url?: string } });
    const incoming = lines.find(
      (line) => line.msg === 'incoming request' && line.req?.url === `/v1/sessions/${sessionId}/runs`,
    );
    expect(incoming?.reqId).toBeDefined();
    const completed = lines.find((line) => line.msg === 'request completed' && line.reqId === incoming?.reqId);
    expect(completed?.trace_id).toBe(TRACE_ID);
    // Off by default: no command text or output in any exported byte.
    expect(receiver.bodies.join('\n')).not.toContain('zebra-command-output');
    fake.assertDone();
  }, 120_000);

  it('with telemetry.capture_content, spans carry prompts, messages and tool input and output, redacted', async () => {
    const fake = await startFakeProvider();
    const receiver = await startOtlpReceiver();
    open.push(fake, receiver);
    const config = configFile('telemetry {\n  capture_content = true\n}\n');
    const server = await startTracedServer(
      { ...baseEnv(fake), ...tracedEnv(receiver) },
      join(tempDir('a3s-otel-log-'), 'imports.log'),
      ['--config', config],
    );
    open.push(server);
    const session = await request(server.url).post('/v1/sessions').send({}).expect(201);
    const sessionId = session.body.session.id as string;
    fake.script(
      { toolCalls: [{ name: 'read', arguments: { file_path: 'quarterly-plan-zebra.md' } }] },
      { text: `the answer names the giraffe and a key ${LEAKED_KEY}` },
    );
    await request(server.url)
      .post(`/v1/sessions/${sessionId}/runs`)
      .send({ input: `Summarize the zebra file; my key is ${LEAKED_KEY}`, wait: true })
      .expect(200);
    const named = (prefix: string): ReceivedSpan[] => receiver.spans.filter((span) => span.name.startsWith(prefix));
    await until(() => named('invoke_agent').length === 1 && named('chat ').length === 2, 'the run span');
    const [agent] = named('invoke_agent');
    expect(agent?.attributes['a3s.run.input']).toBe('Summarize the zebra file; my key is [REDACTED]');
    expect(agent?.attributes['a3s.run.output']).toBe('the answer names the giraffe and a key [REDACTED]');
    const [tool] = named('execute_tool read');
    expect(String(tool?.attributes['gen_ai.tool.call.arguments'])).toContain('quarterly-plan-zebra.md');
    expect(String(tool?.attributes['gen_ai.tool.call.result'])).toContain('ship the giraffe feature');
    const chats = named('chat ');
    const inputs = chats.map((chat) => JSON.parse(String(chat.attributes['gen_ai.input.messages'])) as unknown[]);
    expect(inputs.map((messages) => messages.length).sort()).toEqual([2, 4]);
    const outputs = chats.map((chat) => String(chat.attributes['gen_ai.output.messages']));
    expect(outputs.some((text) => text.includes('"name":"read"'))).toBe(true);
    expect(outputs.some((text) => text.includes('the answer names the giraffe'))).toBe(true);
    // Captured, but never a secret: the redactor ran over every value.
    expect(receiver.bodies.join('\n')).not.toContain(LEAKED_KEY);
    expect(receiver.bodies.join('\n')).not.toContain('sk-otel-test-key');
    fake.assertDone();
  }, 120_000);

  it('a run resumed after a restart continues the trace of the run it resumes and links the resuming request', async () => {
    const fake = await startFakeProvider();
    const receiver = await startOtlpReceiver();
    open.push(fake, receiver);
    const env = { ...baseEnv(fake), ...tracedEnv(receiver) };
    const first = await startTracedServer(env, join(tempDir('a3s-otel-log-'), 'imports.log'));
    open.push(first);
    await request(first.url).post('/v1/sessions').send({ sessionId: 'traced-resume', autoSave: true }).expect(201);
    fake.script({ toolCalls: [{ name: 'ls', arguments: { path: '.' } }] }, { hang: true });
    const started = await request(first.url)
      .post('/v1/sessions/traced-resume/runs')
      .set('traceparent', `00-${TRACE_ID}-00f067aa0ba902b7-01`)
      .send({ input: 'list and then think' })
      .expect(202);
    const runId = started.body.runId as string;
    // The second provider call starts after the tool round's checkpoint was saved.
    await fake.waitForRequests(2, 20_000);
    await first.stop('SIGTERM');
    const [original] = receiver.spans.filter((span) => span.name.startsWith('invoke_agent'));
    expect(original?.traceId).toBe(TRACE_ID);

    const second = await startTracedServer(env, join(tempDir('a3s-otel-log-'), 'imports.log'));
    open.push(second);
    fake.script({ text: 'resumed and done' });
    const resumed = await request(second.url)
      .post(`/v1/sessions/traced-resume/runs/${runId}/resume`)
      .set('traceparent', `00-${OTHER_TRACE}-b7ad6b7169203331-01`)
      .send({ wait: true })
      .expect(200);
    expect(resumed.body.result.text).toBe('resumed and done');
    const agentSpans = (): ReceivedSpan[] => receiver.spans.filter((span) => span.name.startsWith('invoke_agent'));
    await until(() => agentSpans().length === 2, 'the resumed run span');
    const continued = agentSpans().find((span) => span.attributes['a3s.run.id'] === resumed.body.runId);
    expect(continued).toMatchObject({
      traceId: TRACE_ID,
      parentSpanId: original?.spanId,
      attributes: { 'a3s.run.resumed_from': runId, 'a3s.run.status': 'completed' },
    });
    const [resumeRequest] = receiver.spans.filter((span) => span.name === 'POST /v1/sessions/:id/runs/:runId/resume');
    expect(resumeRequest?.traceId).toBe(OTHER_TRACE);
    expect(continued?.links).toEqual([{ traceId: OTHER_TRACE, spanId: resumeRequest?.spanId }]);
    fake.assertDone();
  }, 180_000);
});
