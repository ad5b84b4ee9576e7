import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { imageModelProviders } from '../support/image-model.js';
import { connectRedisTarget, redisServerConfig } from '../support/redis-target.js';
import { startFakeProvider } from '../support/fake-provider.js';
import { startTestServer, tempDir } from '../support/test-server.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

describe('attachments on Redis', () => {
  it('a session taken over by another node sends the same parts; purge removes the keys', async () => {
    const fake = await startFakeProvider();
    const prefix = `a3s-att-${Math.random().toString(36).slice(2)}:`;
    const config = {
      ...redisServerConfig(),
      redisKeyPrefix: prefix,
      providers: imageModelProviders(fake),
    };
    const redis = connectRedisTarget();
    const root = tempDir('a3s-ws-');
    const a = await startTestServer({ fake, config, root });
    let b: Awaited<ReturnType<typeof startTestServer>> | undefined;
    try {
      await request(a.url).post('/v1/sessions').send({ sessionId: 'moved', autoSave: true }).expect(201);
      const up = await request(a.url)
        .post('/v1/sessions/moved/attachments')
        .set('content-type', 'image/png')
        .send(PNG)
        .expect(201);
      fake.script({ text: 'one' });
      await request(a.url)
        .post('/v1/sessions/moved/runs')
        .send({
          input: 'see',
          wait: true,
          attachments: [{ type: 'image', mediaType: 'image/png', attachmentId: up.body.attachmentId }],
        })
        .expect(200);
      const keys = await redis.keys(`${prefix}*attachment*`);
      expect(keys.every((key) => key.includes('{%/moved}') || key.includes('/moved}'))).toBe(true);
      expect(keys).toHaveLength(2);
      await a.close();
      b = await startTestServer({ fake, config, root });
      fake.script({ text: 'two' });
      await request(b.url).post('/v1/sessions/moved/runs').send({ input: 'again', wait: true }).expect(200);
      const users = fake.requests.at(-1)!.body.messages.filter((m) => m.role === 'user');
      expect(users[0]!.content).toEqual([
        { type: 'text', text: 'see' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
      ]);
      await request(b.url).delete('/v1/sessions/moved?purge=true').expect(200);
      expect(await redis.keys(`${prefix}*attachment*`)).toEqual([]);
    } finally {
      await b?.close();
      await a.close().catch(() => undefined);
      const left = await redis.keys(`${prefix}*`);
      if (left.length > 0) await redis.del(...left);
      redis.disconnect();
      await fake.close();
    }
  });
});
