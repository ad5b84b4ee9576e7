import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { createSession, ofType, runAndWait, runEvents } from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { subscribe } from '../support/ws-client.js';

// A configured provider key in no well-known format: only the configured-secret rule can catch it.
const SECRET = 'cfg-provider-secret-0123456789abcdef';

function deltaText(events: readonly EventEnvelope[]): string {
  return ofType([...events], 'tool_output_delta')
    .map((e) => String(e.payload.delta))
    .join('');
}

describe('live tool output is redacted like the result', () => {
  let fake: FakeProvider;
  let t: TestServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer({
      fake,
      config: { providers: { openai: { apiKey: SECRET, baseUrl: fake.baseUrl, maxRetries: 0 } } },
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('no tool_output_delta (over WebSocket or paged REST) carries a configured secret, a private key or a secret cut between line pieces', async () => {
    const id = await createSession(t);
    const live = await subscribe(t.url, id);
    const command = [
      'echo "start"',
      `echo "key=${SECRET}"`,
      "printf -- '-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEAsecretbody\\n-----END RSA PRIVATE KEY-----\\n'",
      'echo "Authorization: Bearer"; echo "abcdefghijklmnop1234"',
      'echo "between"',
      // One line longer than 64 KiB: bash streams it in pieces cut at 64 KiB, and the cut falls inside the secret.
      `head -c 65530 /dev/zero | tr '\\0' x; echo "${SECRET} end"`,
      'echo "after"',
    ].join('; ');
    fake.script({ toolCalls: [{ id: 'leak', name: 'bash', arguments: { command } }] }, { text: 'ok' });
    const { run, runId } = await runAndWait(t, id, 'print secrets');
    fake.assertDone();
    expect(run.status).toBe('completed');
    await live.waitFor((e) => e.type === 'agent_end');
    live.close();

    const paged = await runEvents(t, id, runId);
    const streamed = live.events.filter((e) => e.metadata.run_id === runId);
    for (const events of [paged, streamed]) {
      const text = deltaText(events);
      expect(text).toContain('start\n');
      expect(text).toContain('key=[REDACTED]\n');
      expect(text).toContain('[REDACTED]\nbetween\n');
      expect(text).toContain('Authorization: Bearer\n[REDACTED]\n');
      expect(text).toContain('live output stopped');
      for (const fragment of [
        SECRET,
        SECRET.slice(0, 6),
        SECRET.slice(6),
        'MIIEowIBAAKCAQEAsecretbody',
        'abcdefghijklmnop1234',
      ])
        expect(text).not.toContain(fragment);
      // Live output stopped at the long line; nothing after it was streamed.
      expect(text).not.toContain('after');
    }
    expect(deltaText(streamed)).toBe(deltaText(paged));

    // The result is redacted as before, the long line included.
    const end = ofType(paged, 'tool_end')[0];
    const output = String(end.payload.output);
    expect(output).not.toContain(SECRET);
    expect(output).not.toContain('MIIEowIBAAKCAQEAsecretbody');
    expect(output).toContain(`${'x'.repeat(100)}[REDACTED] end\nafter\n`);
    const seen = fake.requests[1].body.messages.find((m) => m.role === 'tool');
    expect(String(seen?.content)).toBe(output);
  });

  it('host-direct calls stream redacted lines to WebSocket subscribers too', async () => {
    const id = await createSession(t);
    const live = await subscribe(t.url, id);
    const out = await request(t.url)
      .post(`/v1/sessions/${id}/tools/bash`)
      .send({ args: { command: `echo "one ${SECRET}"; echo two` } })
      .expect(200);
    expect(out.body.output).toBe('one [REDACTED]\ntwo\n');
    await live.waitFor((e) => e.type === 'tool_end');
    live.close();
    expect(deltaText(live.events)).toBe('one [REDACTED]\ntwo\n');
  });
});
