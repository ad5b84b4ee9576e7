import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { CodeConfigSchema } from '../../src/config/code-config.js';
import { loadConfig } from '../../src/config/load-config.js';
import { eventually, useTestServers } from '../support/run-helpers.js';

const TOKEN = 'token-options-bytes-tenant-a1';
const apiTokens = [{ token: TOKEN, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }];
const as = { authorization: `Bearer ${TOKEN}` };
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('limits.max_session_options_bytes: session options are bounded in bytes (413 naming the limit)', () => {
  const start = useTestServers();

  it('defaults to 256 KiB; the ACL key is read and a bad value fails at startup naming it', async () => {
    expect(CodeConfigSchema.parse({}).limits.maxSessionOptionsBytes).toBe(262_144);
    const config = await loadConfig({
      env: {},
      cwd: process.cwd(),
      configText: 'limits {\n  max_session_options_bytes = 4096\n}\n',
    });
    expect(config.limits.maxSessionOptionsBytes).toBe(4096);
    for (const value of ['0', '-1', '1.5', '"big"']) {
      await expect(
        loadConfig({
          env: {},
          cwd: process.cwd(),
          configText: `limits {\n  max_session_options_bytes = ${value}\n}\n`,
        }),
      ).rejects.toThrow(/max_?[sS]ession_?[oO]ptions_?[bB]ytes/);
    }
  });

  it('POST /v1/sessions over the bound is 413 PAYLOAD_TOO_LARGE naming the limit and the bytes; at the bound it is 201', async () => {
    const t = await start({ config: { apiTokens, limits: { maxSessionOptionsBytes: 4096 } } });
    const skeleton = { sessionId: 'big', guidelines: '' };
    const exact = { ...skeleton, guidelines: 'g'.repeat(4096 - bytesOf(skeleton)) };
    expect(bytesOf(exact)).toBe(4096);
    const over = { ...exact, guidelines: `${exact.guidelines}g` };
    const refused = await request(t.url).post('/v1/sessions').set(as).send(over).expect(413);
    expect(refused.body.error).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      details: { field: 'body', limit: 'limits.maxSessionOptionsBytes', maxBytes: 4096, bytes: 4097 },
    });
    expect(refused.body.error.message).toContain('limits.max_session_options_bytes');
    await request(t.url).get('/v1/sessions/big').set(as).expect(404);
    // Multi-byte characters count in UTF-8 bytes, not characters.
    const wide = await request(t.url)
      .post('/v1/sessions')
      .set(as)
      .send({ guidelines: 'é'.repeat(2100) })
      .expect(413);
    expect(wide.body.error.details.bytes).toBe(bytesOf({ guidelines: 'é'.repeat(2100) }));
    await request(t.url).post('/v1/sessions').set(as).send(exact).expect(201);
  });

  it('resume with options over the bound is refused too, before the stored session is read', async () => {
    const t = await start({ config: { apiTokens, limits: { maxSessionOptionsBytes: 2048 } } });
    await request(t.url).post('/v1/sessions').set(as).send({ sessionId: 'kept', autoSave: true }).expect(201);
    await request(t.url).delete('/v1/sessions/kept').set(as).expect(200);
    const refused = await request(t.url)
      .post('/v1/sessions')
      .set(as)
      .send({ sessionId: 'kept', resume: true, correlationId: 'c'.repeat(200), guidelines: 'x'.repeat(3000) })
      .expect(413);
    expect(refused.body.error.details).toMatchObject({ limit: 'limits.maxSessionOptionsBytes', maxBytes: 2048 });
    await request(t.url).post('/v1/sessions').set(as).send({ sessionId: 'kept', resume: true }).expect(201);
  });

  it('ACP session/new is bounded the same way (JSON-RPC error carrying PAYLOAD_TOO_LARGE, field "params")', async () => {
    const t = await start({ config: { apiTokens, limits: { maxSessionOptionsBytes: 1024 } } });
    const socket = new WebSocket(`${t.url.replace(/^http/, 'ws')}/acp`, { headers: as });
    const frames: { id?: number }[] = [];
    socket.on('message', (data) => frames.push(JSON.parse(data.toString()) as { id?: number }));
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: 1, clientCapabilities: {} },
      }),
    );
    await eventually(() => frames.some((f) => f.id === 1), 'the initialize answer');
    socket.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'session/new',
        params: { cwd: `${t.root}/${'d'.repeat(2000)}`, mcpServers: [] },
      }),
    );
    await eventually(() => frames.some((f) => f.id === 2), 'the session/new answer');
    expect(frames.find((f) => f.id === 2)).toMatchObject({
      error: {
        code: -32602,
        data: {
          error: {
            code: 'PAYLOAD_TOO_LARGE',
            details: { field: 'params', limit: 'limits.maxSessionOptionsBytes', maxBytes: 1024 },
          },
        },
      },
    });
    socket.close();
  });
});
