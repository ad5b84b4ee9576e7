import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A3sClient, ForkPointUnavailableError, RunNotFoundError, ValidationError } from '../../src/client/index.js';
import type { RecordedRequest } from '../support/fake-provider.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const conversation = (r: RecordedRequest) =>
  r.body.messages.filter((m) => m.role !== 'system').map((m) => `${m.role}:${String(m.content ?? '')}`);

describe('client.fork(sessionId, options)', () => {
  let t: TestServer;
  let client: A3sClient;
  beforeAll(async () => {
    t = await startTestServer();
    client = new A3sClient({ baseUrl: t.url });
  });
  afterAll(async () => {
    await t.close();
  });

  it('forks at a run and at a message; the fork is a Session whose info says where it came from', async () => {
    const parent = await client.session(undefined, { sessionId: 'client-parent' });
    t.fake.script({ text: 'one' }, { text: 'two' });
    await parent.send('first');
    await parent.send('second');
    const second = (await parent.runs()).at(-1)!.runId;
    const fork = await client.fork('client-parent', { atRunId: second, sessionId: 'client-fork' });
    expect(fork.sessionId).toBe('client-fork');
    expect((await fork.info()).forkedFrom).toEqual({ sessionId: 'client-parent', atRunId: second, atMessage: 2 });
    t.fake.script({
      expect: (r) => expect(conversation(r)).toEqual(['user:first', 'assistant:one', 'user:other']),
      text: 'other answer',
    });
    expect((await fork.send('other')).text).toBe('other answer');
    const early = await client.fork('client-parent', { atMessage: 1 });
    expect((await early.history()).map((m) => m.content)).toEqual(['first']);
    expect((await client.fork('client-parent')).created.messageCount).toBe(4);
    t.fake.assertDone();

    await expect(client.fork('client-parent', { atRunId: 'run_missing' })).rejects.toBeInstanceOf(RunNotFoundError);
    await expect(client.fork('client-parent', { atMessage: 40 })).rejects.toBeInstanceOf(ValidationError);
    t.fake.script({ text: 'A summary.' });
    await parent.compact();
    await expect(client.fork('client-parent', { atRunId: second })).rejects.toBeInstanceOf(ForkPointUnavailableError);
    t.fake.assertDone();
  });
});
