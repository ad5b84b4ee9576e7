import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { A3sClient, RunQueueFullError, SessionBusyError, ValidationError } from '../../src/client/index.js';
import { useTestServers } from '../support/run-helpers.js';

describe('the typed client: multitaskStrategy on startRun, stream and send', () => {
  const start = useTestServers();

  it('stream and send with enqueue wait behind the active run; reject and a full queue are typed errors', async () => {
    const t = await start({ config: { limits: { maxQueuedRuns: 2 } } });
    const client = new A3sClient({ baseUrl: t.url, WebSocket });
    const session = await client.session(t.root);
    t.fake.script({ delayMs: 400, text: 'first' }, { text: 'second' }, { text: 'third' });
    const first = await session.startRun('first');
    expect('queuePosition' in first).toBe(false);
    await expect(session.startRun('busy')).rejects.toBeInstanceOf(SessionBusyError);
    const stream = await session.stream('second', undefined, { multitaskStrategy: 'enqueue' });
    const sent = session.send('third', undefined, { multitaskStrategy: 'enqueue' });
    await expect.poll(async () => (await session.runs()).filter((r) => r.status === 'queued').length).toBe(2);
    const full = session.startRun('fourth', { multitaskStrategy: 'enqueue' });
    await expect(full).rejects.toBeInstanceOf(RunQueueFullError);
    await expect(full).rejects.toMatchObject({ status: 429, details: { limit: 'limits.maxQueuedRuns' } });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types[0]).toBe('run_queued');
    expect(types).toContain('agent_start');
    expect(types.at(-1)).toBe('agent_end');
    expect((await sent).text).toBe('third');
    t.fake.assertDone();
  });

  it('resumeRun refuses a strategy by name (the server answers 400 naming it)', async () => {
    const t = await start();
    const client = new A3sClient({ baseUrl: t.url, WebSocket });
    const session = await client.session(t.root);
    const refused = session.resumeRun('run_x', { multitaskStrategy: 'enqueue' });
    await expect(refused).rejects.toBeInstanceOf(ValidationError);
    await expect(refused).rejects.toThrow(/multitaskStrategy/);
  });
});
