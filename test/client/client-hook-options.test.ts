import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { A3sClient } from '../../src/client/index.js';
import { eventually, useTestServers } from '../support/run-helpers.js';

describe("the client's registerHook: the seed's hook config and the new events", () => {
  const start = useTestServers();

  it('passes asyncExecution and maxRetries; a JS handler hears post_response and on_success of a run', async () => {
    const t = await start();
    const client = new A3sClient({ baseUrl: t.url, WebSocket });
    const session = await client.session(t.root);
    const heard: { event: string; payload: Record<string, unknown> }[] = [];
    for (const event of ['post_response', 'on_success'] as const) {
      const info = await session.registerHook(
        `js-${event}`,
        event,
        null,
        { priority: 5, asyncExecution: true, maxRetries: 2 },
        (payload) => {
          heard.push({ event, payload });
          return null;
        },
      );
      expect(info).toMatchObject({ event, priority: 5, asyncExecution: true, maxRetries: 2, timeoutMs: 30_000 });
    }
    t.fake.script({ text: 'All done.' });
    const result = await session.send('finish');
    expect(result.text).toBe('All done.');
    await eventually(() => heard.length === 2, 'both hooks heard');
    expect(heard.map((h) => h.event).sort()).toEqual(['on_success', 'post_response']);
    for (const { payload } of heard)
      expect(payload).toMatchObject({ session_id: session.sessionId, response_text: 'All done.', tool_calls_count: 0 });
    session.disconnectHost();
  });
});
