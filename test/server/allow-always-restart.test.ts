import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ASK_LS, grantLsAlways } from '../support/allow-always.js';
import { ofType, runEvents, toolMessage, useTestServers } from '../support/run-helpers.js';
import { tempDir, writeFiles, type TestServer } from '../support/test-server.js';

describe('"allow always" grants are in the snapshot: they survive a restart (file store)', () => {
  const start = useTestServers();

  it('granted, saved, the server restarted: the next ls runs without a confirmation', async () => {
    const dataDir = tempDir('a3s-data-');
    const root = tempDir('a3s-ws-');
    writeFiles(root, { 'a.txt': 'alpha\n' });
    const first: TestServer = await start({ dataDir, root });
    await request(first.url)
      .post('/v1/sessions')
      .send({ sessionId: 'g1', autoSave: true, ...ASK_LS })
      .expect(201);
    first.fake.script({ toolCalls: [{ id: 'ls_1', name: 'ls', arguments: {} }] }, { text: 'listed' });
    await grantLsAlways(first.url, 'g1');
    await first.close();

    const second = await start({ dataDir, root });
    second.fake.script({ toolCalls: [{ id: 'ls_2', name: 'ls', arguments: {} }] }, { text: 'listed again' });
    const run = (
      await request(second.url).post('/v1/sessions/g1/runs').send({ input: 'list again', wait: true }).expect(200)
    ).body as { runId: string; result: { text: string } };
    expect(run.result.text).toBe('listed again');
    expect(toolMessage(second, 'ls_2')).toContain('a.txt');
    expect(ofType(await runEvents(second, 'g1', run.runId), 'confirmation_required')).toEqual([]);
    second.fake.assertDone();
  });
});
