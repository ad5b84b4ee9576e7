import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import { startFakeProvider } from '../support/fake-provider.js';
import { createSession, eventually, runAndWait, useTestServers } from '../support/run-helpers.js';
import { fixtureFile } from '../support/snapshot-fixture-generator.js';
import { tempDir } from '../support/test-server.js';
import { bash, ownForSandbox } from './changes-helpers.js';
import { requestText, revert, unrevert } from './revert-helpers.js';

const HAVE_BWRAP = bwrapWorks();

/** The saved snapshot file of a session on the file store. */
function storedSession(dataDir: string, id: string): { session: { reverted?: { runIds: string[] } } } {
  return JSON.parse(readFileSync(join(dataDir, 'sessions', fixtureFile('default', id)), 'utf8')) as {
    session: { reverted?: { runIds: string[] } };
  };
}

describe.skipIf(!HAVE_BWRAP)('revert across a restart (file store)', () => {
  const start = useTestServers();

  it('the reverted messages stay hidden after a restart, and unrevert then restores files and messages', async () => {
    const fake = await startFakeProvider();
    const dataDir = tempDir('a3s-data-');
    const root = tempDir('a3s-ws-');
    const ws = join(root, 'durable');
    mkdirSync(ws);
    writeFileSync(join(ws, 'a.txt'), 'a0\n');
    try {
      const first = await start({ fake, dataDir, root });
      ownForSandbox(first, ws);
      const id = await createSession(first, { workspace: ws, autoSave: true });
      fake.script({ toolCalls: [bash('r1', 'echo a1 > a.txt && echo b > b.txt')] }, { text: 'DURABLE-ANSWER' });
      const run = await runAndWait(first, id, 'DURABLE-INPUT');
      const reverted = await revert(first, id, run.runId);
      expect(reverted.files.map((file) => file.path)).toEqual(['a.txt', 'b.txt']);
      await eventually(() => storedSession(dataDir, id).session.reverted !== undefined, 'the revert to be saved');
      expect(storedSession(dataDir, id).session.reverted?.runIds).toEqual([run.runId]);
      await first.close();

      const second = await start({ fake, dataDir, root });
      expect((await request(second.url).get(`/v1/sessions/${id}`).expect(200)).body.session.messageCount).toBe(0);
      const back = await unrevert(second, id);
      expect(back.files.map((file) => file.path)).toEqual(['a.txt', 'b.txt']);
      expect(readFileSync(join(ws, 'a.txt'), 'utf8')).toBe('a1\n');
      expect(readFileSync(join(ws, 'b.txt'), 'utf8')).toBe('b\n');
      const seen = fake.requests.length;
      fake.script({ text: 'again' });
      await runAndWait(second, id, 'NEXT');
      // The unreverted messages are the model's again.
      const text = requestText(fake.requests[seen]!.body);
      expect(text).toContain('DURABLE-INPUT');
      expect(text).toContain('DURABLE-ANSWER');
      fake.assertDone();
    } finally {
      await fake.close();
    }
  });
});
