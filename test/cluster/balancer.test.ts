import { get as httpGet } from 'node:http';
import { HttpAgent } from '@ag-ui/client';
import { client as acpClient, type SessionUpdate } from '@agentclientprotocol/sdk';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import request from 'supertest';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A3sClient } from '../../src/client/a3s-client.js';
import { buildCli, removeCli, runA3s } from '../cli/a3s-process.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startNginx, type NginxBalancer } from '../support/nginx-balancer.js';
import { startRedisNodes } from '../support/redis-target.js';
import { tempDir, type TestServer } from '../support/test-server.js';
import { subscribe } from '../support/ws-client.js';

const TOKEN = 'tenant-a-balancer-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };

/** Every answer a test got through the balancer, to check none is a 421 or names a node's own URL. */
const answers: { status: number; text: string }[] = [];
function seen<T extends { status: number; text: string }>(res: T): T {
  answers.push({ status: res.status, text: res.text });
  return res;
}

function sseUntil(url: string, marker: string, headers: Record<string, string> = auth): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, { headers: { ...headers, accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`SSE answered ${res.statusCode}`));
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
        if (body.includes(marker)) {
          req.destroy();
          resolve(body);
        }
      });
    });
    req.on('error', (error) => (error.message.includes('socket hang up') ? undefined : reject(error)));
  });
}

// Two nodes on one Redis (and, in the redis-cluster project, on a Redis Cluster) behind Debian's nginx with
// the shipped deploy/nginx.conf: plain per-request round-robin, so consecutive requests alternate nodes.
describe('through a plain round-robin nginx in front of two nodes', () => {
  let fake: FakeProvider;
  let a: TestServer;
  let b: TestServer;
  let lb: NginxBalancer;
  let cli: string;
  let root: string;
  beforeAll(async () => {
    fake = await startFakeProvider();
    root = tempDir('a3s-lb-ws-');
    [a, b] = await startRedisNodes(fake, 'a3s-lb', {
      apiTokens: [{ token: TOKEN, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }],
      workspaceRoots: [root],
    });
    lb = await startNginx([new URL(a.url).host, new URL(b.url).host]);
    cli = buildCli();
  }, 120_000);
  afterAll(async () => {
    await lb?.close();
    await b?.close();
    await a?.close();
    await fake?.close();
    if (cli) removeCli(cli);
    // No answer through the balancer was a 421 or carried a node's address.
    expect(answers.filter((r) => r.status === 421)).toEqual([]);
    expect(answers.filter((r) => r.text.includes(a.url) || r.text.includes(b.url))).toEqual([]);
  });

  for (const autoSave of [false, true]) {
    it(`a ${autoSave ? 'autoSave' : 'default'} session: every request answers on whichever node it reaches`, async () => {
      const id = `lb-${autoSave ? 'saved' : 'plain'}`;
      seen(
        await request(lb.url)
          .post('/v1/sessions')
          .set(auth)
          .send({ sessionId: id, ...(autoSave ? { autoSave } : {}) })
          .expect(201),
      );
      // Ten requests in a row: round-robin sends half of them to the node that does not own the session.
      for (let i = 0; i < 10; i++) seen(await request(lb.url).get(`/v1/sessions/${id}`).set(auth).expect(200));
      fake.script({ text: `waited answer ${id}` });
      const waited = seen(
        await request(lb.url).post(`/v1/sessions/${id}/runs`).set(auth).send({ input: 'hi', wait: true }).expect(200),
      );
      expect(waited.body.result.text).toBe(`waited answer ${id}`);
      fake.script({ text: `async answer ${id}` });
      const started = seen(
        await request(lb.url).post(`/v1/sessions/${id}/runs`).set(auth).send({ input: 'again' }).expect(202),
      );
      let status = '';
      for (let i = 0; i < 200 && status !== 'completed'; i++) {
        status = seen(await request(lb.url).get(`/v1/sessions/${id}/runs/${started.body.runId}`).set(auth).expect(200))
          .body.run.status as string;
        if (status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(status).toBe('completed');
      const history = seen(await request(lb.url).get(`/v1/sessions/${id}/history`).set(auth).expect(200));
      expect(history.text).toContain(`async answer ${id}`);
      const runs = seen(await request(lb.url).get(`/v1/sessions/${id}/runs`).set(auth).expect(200));
      expect(runs.text).toContain(started.body.runId);
      const events = await sseUntil(`${lb.url}/v1/sessions/${id}/events?after=0`, `async answer`);
      expect(events).toContain('event: agent_end');
    });
  }

  it('SSE with a ticket through the balancer: issued on one node, accepted by whichever node the stream reaches', async () => {
    seen(await request(lb.url).post('/v1/sessions').set(auth).send({ sessionId: 'lb-ticket' }).expect(201));
    fake.script({ text: 'followed with a ticket' });
    seen(
      await request(lb.url).post('/v1/sessions/lb-ticket/runs').set(auth).send({ input: 'hi', wait: true }).expect(200),
    );
    const issued = seen(
      await request(lb.url).post('/v1/auth/ticket').set(auth).send({ sessionId: 'lb-ticket' }).expect(200),
    );
    // Four streams with the same ticket (reusable until it expires, as EventSource reconnects): both nodes see it.
    for (let i = 0; i < 4; i++) {
      const events = await sseUntil(
        `${lb.url}/v1/sessions/lb-ticket/events?after=0&ticket=${encodeURIComponent(issued.body.ticket as string)}`,
        'event: agent_end',
        {},
      );
      expect(events).toContain('followed with a ticket');
    }
  });

  it('a WebSocket through the balancer follows the run and answers its confirmation; REST cancel works too', async () => {
    const policy = {
      permissionPolicy: { ask: ['ls'], defaultDecision: 'allow' },
      confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000 },
    };
    seen(
      await request(lb.url)
        .post('/v1/sessions')
        .set(auth)
        .send({ sessionId: 'lb-ws', ...policy })
        .expect(201),
    );
    // Two sockets: round-robin puts them on different nodes; both act on the owner's session.
    const first = await subscribe(lb.url, 'lb-ws', { after: 0, token: TOKEN });
    const second = await subscribe(lb.url, 'lb-ws', { after: 0, token: TOKEN });
    fake.script({ toolCalls: [{ id: 'c1', name: 'ls', arguments: {} }] }, { text: 'confirmed over the socket' });
    const run = request(lb.url)
      .post('/v1/sessions/lb-ws/runs')
      .set(auth)
      .send({ input: 'list', wait: true })
      .then((res) => res);
    const asked = await second.waitFor((e) => e.type === 'confirmation_required');
    await first.waitFor((e) => e.type === 'confirmation_required');
    second.send({ type: 'confirm', toolId: (asked.payload as { tool_id: string }).tool_id, approved: true });
    expect(seen(await run).body.result.text).toBe('confirmed over the socket');
    await second.waitFor(() => second.controls.some((c) => c.type === 'confirm_result'));
    expect([...first.controls, ...second.controls].filter((c) => c.type === 'error')).toEqual([]);
    fake.script({ text: 'slow '.repeat(50), chunks: 50, chunkDelayMs: 100 });
    const slow = seen(
      await request(lb.url).post('/v1/sessions/lb-ws/runs').set(auth).send({ input: 'slow' }).expect(202),
    );
    await first.waitFor((e) => e.type === 'text_delta' && e.metadata.run_id === slow.body.runId);
    seen(
      await request(lb.url).post(`/v1/sessions/lb-ws/runs/${slow.body.runId}/cancel`).set(auth).send({}).expect(200),
    );
    await first.waitFor((e) => e.type === 'agent_end' && e.metadata.run_id === slow.body.runId);
    first.close();
    second.close();
  });

  it('a confirmation rejected over REST through the balancer reaches the run, wherever each request lands', async () => {
    const policy = {
      permissionPolicy: { ask: ['ls'], defaultDecision: 'allow' },
      confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000 },
    };
    seen(
      await request(lb.url)
        .post('/v1/sessions')
        .set(auth)
        .send({ sessionId: 'lb-reject', ...policy })
        .expect(201),
    );
    fake.script({ toolCalls: [{ id: 'rej1', name: 'ls', arguments: {} }] }, { text: 'did not list' });
    const run = request(lb.url)
      .post('/v1/sessions/lb-reject/runs')
      .set(auth)
      .send({ input: 'list', wait: true })
      .then((res) => res);
    let pending: { toolId: string } | undefined;
    for (let i = 0; i < 200 && !pending; i++) {
      pending = (
        seen(await request(lb.url).get('/v1/sessions/lb-reject/confirmations').set(auth).expect(200)).body
          .confirmations as { toolId: string }[]
      )[0];
      if (!pending) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(pending).toBeDefined();
    seen(
      await request(lb.url)
        .post(`/v1/sessions/lb-reject/confirmations/${encodeURIComponent(pending?.toolId ?? '')}`)
        .set(auth)
        .send({ approved: false, reason: 'no' })
        .expect(200),
    );
    const done = seen(await run);
    expect(done.body.result.text).toBe('did not list');
    expect(
      JSON.stringify(seen(await request(lb.url).get('/v1/sessions/lb-reject/history').set(auth).expect(200)).body),
    ).toContain('no');
  });

  it('AG-UI HttpAgent through the balancer: runs on the owner, an interrupt is answered by the next request', async () => {
    const policy = {
      permissionPolicy: { ask: ['ls'], defaultDecision: 'allow' },
      confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000 },
    };
    seen(
      await request(lb.url)
        .post('/v1/sessions')
        .set(auth)
        .send({ sessionId: 'lb-agui', ...policy })
        .expect(201),
    );
    const agent = new HttpAgent({ url: `${lb.url}/v1/agui/lb-agui`, threadId: 'lb-agui', headers: auth });
    agent.addMessage({ id: 'u1', role: 'user', content: 'list the files' });
    fake.script({ toolCalls: [{ id: 'agui_ls', name: 'ls', arguments: {} }] }, { text: 'listed through the balancer' });
    const types: string[] = [];
    let interrupts: { id: string }[] = [];
    await agent.runAgent(
      {},
      {
        onEvent: ({ event }) => void types.push(event.type),
        onRunFinishedEvent: (p) => void (p.outcome === 'interrupt' && (interrupts = p.interrupts)),
      },
    );
    expect(types[0]).toBe('RUN_STARTED');
    expect(types.at(-1)).toBe('RUN_FINISHED');
    expect(interrupts).toHaveLength(1);
    // The answer goes out as a new run request, which round-robin may send to the other node.
    const resumed: string[] = [];
    const text: string[] = [];
    await agent.runAgent(
      {
        runId: 'lb-agui-2',
        resume: [{ interruptId: interrupts[0].id, status: 'resolved', payload: { approved: true } }],
      },
      {
        onEvent: ({ event }) => {
          resumed.push(event.type);
          if (event.type === 'TEXT_MESSAGE_CONTENT') text.push((event as unknown as { delta: string }).delta);
        },
      },
    );
    expect(resumed.at(-1)).toBe('RUN_FINISHED');
    expect(text.join('')).toBe('listed through the balancer');
  });

  it('ACP through the balancer: an editor connected to either node runs prompts on the session wherever it lives', async () => {
    const updates: SessionUpdate[] = [];
    const editor = acpClient({ name: 'lb-editor' })
      .onNotification('session/update', ({ params }) => void updates.push(params.update))
      .onRequest('session/request_permission', ({ params }) => ({
        outcome: {
          outcome: 'selected',
          optionId: params.options.find((o) => o.kind === 'allow_once')?.optionId ?? 'none',
        },
      }));
    const wsUrl = `${lb.url.replace(/^http/, 'ws')}/acp`;
    const sessionId = await editor.connectWith(
      createWebSocketStream(wsUrl, { WebSocket, headers: auth }),
      async (ctx) => {
        await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
        const created = await ctx.request('session/new', { cwd: root, mcpServers: [] });
        fake.script({ text: 'acp through nginx' });
        expect(
          (
            await ctx.request('session/prompt', {
              sessionId: created.sessionId,
              prompt: [{ type: 'text', text: 'hi' }],
            })
          ).stopReason,
        ).toBe('end_turn');
        return created.sessionId;
      },
    );
    // Two more connections: round-robin puts one of them on the node that does not own the session.
    for (let i = 0; i < 2; i++) {
      updates.length = 0;
      await editor.connectWith(createWebSocketStream(wsUrl, { WebSocket, headers: auth }), async (ctx) => {
        await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
        await ctx.request('session/load', { sessionId, cwd: root, mcpServers: [] });
        fake.script({ text: `again ${i}` });
        expect(
          (await ctx.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `again ${i}` }] }))
            .stopReason,
        ).toBe('end_turn');
      });
      const text = updates
        .flatMap((u) =>
          u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : [],
        )
        .join('');
      expect(text).toContain('acp through nginx');
      expect(text).toContain(`again ${i}`);
    }
  });

  it('the typed client works through the balancer', async () => {
    const client = new A3sClient({ baseUrl: lb.url, token: TOKEN });
    const session = await client.session(undefined, {});
    fake.script({ text: 'from the client' });
    expect((await session.send('hello')).text).toBe('from the client');
    expect((await session.history()).some((m) => JSON.stringify(m).includes('from the client'))).toBe(true);
    expect((await session.runs()).length).toBe(1);
    expect(await session.close()).toBe(true);
  });

  it('a3s run through the balancer: 20 runs in a row, each exit 0', async () => {
    const env = { HOME: tempDir('a3s-lb-home-'), A3S_URL: lb.url, A3S_TOKEN: TOKEN };
    for (let i = 0; i < 20; i++) {
      fake.script({ text: `answer ${i}` });
      const result = await runA3s(cli, ['run', `question ${i}`], { env });
      expect({ i, code: result.code, stderr: result.code === 0 ? '' : result.stderr }).toEqual({
        i,
        code: 0,
        stderr: '',
      });
      expect(result.stdout).toBe(`answer ${i}\n`);
    }
  }, 120_000);
});
