import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { startFakeProvider } from '../support/fake-provider.js';
import { createSession, runAndWait, useTestServers } from '../support/run-helpers.js';
import { tempDir } from '../support/test-server.js';
import { subscribe } from '../support/ws-client.js';

describe('replaying a restored session over the WebSocket', () => {
  const start = useTestServers();

  it("replays the earlier life's session_closed (shutdown) like any event and stays open for the live ones", async () => {
    const dataDir = tempDir('a3s-replay-');
    const fake = await startFakeProvider();
    try {
      const first = await start({ dataDir, fake });
      const id = await createSession(first, { autoSave: true });
      fake.script({ text: 'before the restart' });
      await runAndWait(first, id, 'one');
      await first.close();

      const second = await start({ dataDir, fake, root: first.root });
      await request(second.url).get(`/v1/sessions/${id}`).expect(200);
      const socket = await subscribe(second.url, id, { after: 0 });
      const replayed = await socket.waitFor((e) => e.type === 'session_closed');
      expect(replayed.payload).toMatchObject({ reason: 'shutdown' });
      fake.script({ text: 'after the restart' });
      const run = await runAndWait(second, id, 'two');
      const end = await socket.waitFor((e) => e.type === 'agent_end' && e.metadata.run_id === run.runId);
      expect(end.payload).toMatchObject({ text: 'after the restart' });
      socket.close();
      fake.assertDone();
    } finally {
      await fake.close();
    }
  });
});
