import { join } from 'node:path';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeProvider } from '../support/fake-provider.js';
import { redisServerEnv } from '../support/redis-target.js';
import { tempDir } from '../support/test-server.js';
import { startOtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';
import { baseEnv, startTracedServer, TRACE_ID, until, type TracedServer } from './traced-server.js';

const open: Array<{ close(): Promise<void> } | TracedServer> = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await ('stop' in item ? item.stop() : item.close());
});

describe('OpenTelemetry traces on Redis', () => {
  it("a traced run's Redis commands are client spans under the run or its tool call, named and counted only", async () => {
    const fake = await startFakeProvider();
    const receiver = await startOtlpReceiver();
    open.push(fake, receiver);
    const prefix = `otel-zebra-${Math.random().toString(36).slice(2)}:`;
    const server = await startTracedServer(
      {
        ...baseEnv(fake),
        ...redisServerEnv(),
        A3S_REDIS_KEY_PREFIX: prefix,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
      join(tempDir('a3s-otel-log-'), 'imports.log'),
    );
    open.push(server);
    await request(server.url).post('/v1/sessions').send({ sessionId: 'giraffe-session' }).expect(201);
    fake.script({ toolCalls: [{ name: 'ls', arguments: { path: '.' } }] }, { text: 'listed' });
    await request(server.url)
      .post('/v1/sessions/giraffe-session/runs')
      .set('traceparent', `00-${TRACE_ID}-00f067aa0ba902b7-01`)
      .send({ input: 'list it', wait: true })
      .expect(200);
    const named = (prefix: string): ReceivedSpan[] => receiver.spans.filter((span) => span.name.startsWith(prefix));
    await until(() => named('invoke_agent').length === 1, 'the run span');
    const [agent] = named('invoke_agent');
    const ours = new Set([agent?.spanId, ...named('execute_tool').map((span) => span.spanId)]);
    const redis = named('redis ').filter((span) => span.traceId === TRACE_ID);
    // The run path talks to Redis (checkpoint, events, the run record): every command a child of the run's spans.
    expect(redis.length).toBeGreaterThan(0);
    for (const span of redis) {
      expect(ours.has(span.parentSpanId), span.name).toBe(true);
      expect(span).toMatchObject({
        kind: 3,
        attributes: {
          'db.system.name': 'redis',
          'db.operation.name': span.name.slice('redis '.length),
          'a3s.redis.keys': expect.any(Number),
        },
      });
    }
    // Names and counts only: no key (the prefix), argument or reply is exported (the session id is a run attribute).
    const exported = receiver.bodies.join('\n');
    for (const secret of ['otel-zebra', 'list it', 'listed']) expect(exported).not.toContain(secret);
    // Work outside a traced run (lease renewals, stream followers) starts no trace of its own.
    expect(named('redis ').every((span) => span.traceId === TRACE_ID)).toBe(true);
    fake.assertDone();
  }, 120_000);
});
