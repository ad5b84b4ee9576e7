import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeProvider } from '../support/fake-provider.js';
import { tempDir } from '../support/test-server.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';
import {
  ANSWER,
  baseEnv,
  CALLER_SPAN,
  PROMPT,
  REPO,
  startTracedServer as startServer,
  TRACE_ID,
  until,
  VITE_NODE,
  type TracedServer,
} from './traced-server.js';

const open: Array<{ close(): Promise<void> } | TracedServer> = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await ('stop' in item ? item.stop() : item.close());
});

describe('OpenTelemetry traces', () => {
  it("exports a run's span tree under the caller's traceparent, with GenAI attributes and no user content", async () => {
    const fake = await startFakeProvider();
    const receiver: OtlpReceiver = await startOtlpReceiver();
    open.push(fake, receiver);
    const importLog = join(tempDir('a3s-otel-log-'), 'imports.log');
    const server = await startServer(
      {
        ...baseEnv(fake),
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_SERVICE_NAME: 'a3s-under-test',
      },
      importLog,
    );
    open.push(server);
    expect(readFileSync(importLog, 'utf8')).toContain('@opentelemetry/sdk-node');
    const session = await request(server.url).post('/v1/sessions').send({}).expect(201);
    const sessionId = session.body.session.id as string;
    fake.script(
      { toolCalls: [{ name: 'ls', arguments: { path: '.' } }], usage: { prompt_tokens: 31, completion_tokens: 7 } },
      { text: ANSWER, usage: { prompt_tokens: 45, completion_tokens: 12 } },
    );
    const run = await request(server.url)
      .post(`/v1/sessions/${sessionId}/runs`)
      .set('traceparent', `00-${TRACE_ID}-${CALLER_SPAN}-01`)
      .set('tracestate', 'vendor=tracestate-secret')
      .set('baggage', 'user=baggage-alice')
      .send({ input: PROMPT, wait: true })
      .expect(200);
    expect(run.body.result.text).toBe(ANSWER);
    const runId = run.body.runId as string;
    const named = (prefix: string): ReceivedSpan[] => receiver.spans.filter((span) => span.name.startsWith(prefix));
    await until(
      () => named('invoke_agent').length === 1 && named('POST /v1/sessions/:id/runs').length === 1,
      'the run and request spans',
    );

    const [http] = named('POST /v1/sessions/:id/runs');
    const [agent] = named('invoke_agent');
    const chats = named('chat ');
    const tools = named('execute_tool');
    // One trace, the caller's: request -> run -> two provider calls and the tool call between them.
    for (const span of [http, agent, ...chats, ...tools]) expect(span?.traceId).toBe(TRACE_ID);
    expect(http).toMatchObject({
      parentSpanId: CALLER_SPAN,
      kind: 2,
      serviceName: 'a3s-under-test',
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/v1/sessions/:id/runs',
        'http.response.status_code': 200,
      },
    });
    expect(agent).toMatchObject({
      name: 'invoke_agent openai/test-model',
      parentSpanId: http?.spanId,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'a3s.session.id': sessionId,
        'a3s.run.id': runId,
        'a3s.tenant.id': 'default',
        'a3s.run.status': 'completed',
        'a3s.run.tool_calls': 1,
      },
    });
    expect(chats).toHaveLength(2);
    for (const chat of chats)
      expect(chat).toMatchObject({
        name: 'chat test-model',
        kind: 3,
        parentSpanId: agent?.spanId,
        attributes: {
          'gen_ai.system': 'openai',
          'gen_ai.request.model': 'test-model',
          'gen_ai.operation.name': 'chat',
        },
      });
    expect(chats.map((chat) => chat.attributes['gen_ai.usage.input_tokens']).sort()).toEqual([31, 45]);
    expect(chats.map((chat) => chat.attributes['gen_ai.usage.output_tokens']).sort()).toEqual([12, 7]);
    expect(chats.map((chat) => chat.attributes['gen_ai.response.finish_reasons'])).toEqual(
      expect.arrayContaining([['tool_calls'], ['stop']]),
    );
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({
      name: 'execute_tool ls',
      parentSpanId: agent?.spanId,
      attributes: { 'gen_ai.tool.name': 'ls', 'a3s.tool.exit_code': 0, 'a3s.tool.outcome': 'ok' },
    });

    // Nothing the user or the model wrote, no header value and no key leaves through the exporter.
    const exported = receiver.bodies.join('\n');
    for (const secret of ['zebra', 'giraffe', 'tracestate-secret', 'baggage-alice', 'sk-otel-test-key', 'Summarize'])
      expect(exported).not.toContain(secret);
    fake.assertDone();
  }, 120_000);

  it('without OTEL_* variables the SDK is never imported and nothing is exported', async () => {
    const fake = await startFakeProvider();
    open.push(fake);
    const importLog = join(tempDir('a3s-otel-log-'), 'imports.log');
    const server = await startServer(baseEnv(fake), importLog);
    open.push(server);
    const session = await request(server.url).post('/v1/sessions').send({}).expect(201);
    fake.script({ text: 'hello' });
    await request(server.url)
      .post(`/v1/sessions/${session.body.session.id as string}/runs`)
      .set('traceparent', `00-${TRACE_ID}-${CALLER_SPAN}-01`)
      .send({ input: 'hi', wait: true })
      .expect(200);
    expect(existsSync(importLog) ? readFileSync(importLog, 'utf8') : '').toBe('');
    fake.assertDone();
  }, 120_000);

  it('refuses an exporter or protocol it would not act on, at startup, naming the variable', async () => {
    for (const [name, value] of [
      ['OTEL_TRACES_EXPORTER', 'zipkin'],
      ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc'],
    ] as const) {
      const child = spawn(process.execPath, [VITE_NODE, join(REPO, 'src', 'main.ts')], {
        cwd: REPO,
        env: {
          PATH: process.env.PATH ?? '',
          A3S_PORT: '0',
          A3S_DATA_DIR: tempDir('a3s-otel-data-'),
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
          [name]: value,
        },
      });
      let err = '';
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(code, err).toBe(2);
      expect(err).toContain(`${name}: "${value}"`);
    }
  }, 60_000);
});
