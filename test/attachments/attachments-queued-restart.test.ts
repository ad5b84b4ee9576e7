import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { startFakeProvider } from '../support/fake-provider.js';
import { imageModelProviders } from '../support/image-model.js';
import { createSession, eventually, getRun, startRun, useTestServers } from '../support/run-helpers.js';

const start = useTestServers();

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

describe('a queued run keeps its attachments durably', () => {
  it('queued with an inline image and a text file, it sends the same parts when it starts after a restart', async () => {
    const fake = await startFakeProvider();
    try {
      const config = {
        providers: imageModelProviders(fake),
      };
      const t = await start({ fake, config });
      const id = await createSession(t, { autoSave: true });
      fake.script({ hang: true });
      const active = await startRun(t, id, 'never answered');
      await fake.waitForRequests(1);
      const queued = (
        await request(t.url)
          .post(`/v1/sessions/${id}/runs`)
          .send({
            input: 'after the restart',
            multitaskStrategy: 'enqueue',
            attachments: [
              { type: 'image', mediaType: 'image/png', data: PNG.toString('base64') },
              { type: 'file', name: 'a.md', mediaType: 'text/markdown', data: Buffer.from('# A\n').toString('base64') },
            ],
          })
          .expect(202)
      ).body as { runId: string };
      await t.close();
      // The snapshot keeps references with the queued run, never the bytes.
      const sessions = join(t.dataDir, 'sessions');
      const snapshotText = readdirSync(sessions, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile() && entry.name.endsWith('.json'))
        .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'))
        .find((text) => text.includes(queued.runId))!;
      const snapshot = JSON.parse(snapshotText) as { run_queue_attachments?: Record<string, unknown[]> };
      expect(snapshot.run_queue_attachments?.[queued.runId]).toEqual([
        expect.objectContaining({ type: 'image', mediaType: 'image/png', bytes: PNG.length }),
        expect.objectContaining({ type: 'file', name: 'a.md', mediaType: 'text/markdown' }),
      ]);
      expect(snapshotText).not.toContain(PNG.toString('base64'));

      const again = await start({ fake, config, dataDir: t.dataDir, root: t.root });
      fake.script({ text: 'answered after the restart' });
      expect((await getRun(again, id, queued.runId)).input).toBe('after the restart');
      await eventually(async () => (await getRun(again, id, queued.runId)).status === 'completed', 'the queued run');
      expect((await getRun(again, id, active)).status).toBe('cancelled');
      const user = fake.requests[1]!.body.messages.filter((m) => m.role === 'user').at(-1);
      expect(user?.content).toEqual([
        { type: 'text', text: 'after the restart' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
        { type: 'text', text: 'a.md:\n# A\n' },
      ]);
      fake.assertDone();
    } finally {
      await fake.close();
    }
  });
});
