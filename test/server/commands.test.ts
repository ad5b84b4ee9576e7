import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import {
  createSession,
  eventually,
  getRun,
  history,
  ofType,
  runAndWait,
  runEvents,
  startRun,
} from '../support/run-helpers.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { startWebhookServer, type WebhookServer } from '../support/webhook-server.js';
import { subscribe } from '../support/ws-client.js';

describe('slash commands over HTTP: `/name args` runs a command instead of the model', () => {
  let fake: FakeProvider;
  let t: TestServer;
  let hooks: WebhookServer;
  beforeAll(async () => {
    fake = await startFakeProvider();
    hooks = await startWebhookServer({
      '/echo': (body) => ({
        body: {
          text: `webhook saw "${String(body.args)}" in ${String(body.sessionId)} (history ${String(body.historyLen)})`,
        },
      }),
      '/slow': { body: { text: 'too late' }, delayMs: 3000 },
      '/bad': { body: { nope: true } },
      '/fail': { status: 500, body: 'boom' },
    });
    t = await startTestServer({
      fake,
      config: {
        providers: {
          openai: {
            apiKey: 'sk-test',
            baseUrl: fake.baseUrl,
            maxRetries: 0,
            models: { 'test-model': { cost: { input: 2, output: 10 } }, 'other-model': {} },
          },
        },
        commands: [{ name: 'greet', description: 'Say hello', kind: 'template', template: 'hello {{args}}' }],
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
    await hooks.close();
  });

  async function register(id: string, body: Record<string, unknown>, status = 201) {
    return request(t.url).post(`/v1/sessions/${id}/commands`).send(body).expect(status);
  }

  it('a template command renders every context variable; the transcript gets the input and the text; no provider call', async () => {
    const id = await createSession(t);
    fake.script({ text: 'hi there' });
    await runAndWait(t, id, 'hello');
    fake.assertDone();
    await register(id, {
      name: 'ctx',
      description: 'show context',
      kind: 'template',
      template:
        'args=[{{args}}] sid={{sessionId}} ws={{workspace}} model={{model}} len={{historyLen}} tok={{totalTokens}} cost={{totalCost}} tools={{toolNames}} mcp=[{{mcpServers}}] keep={{unknown}}',
    });
    const done = await runAndWait(t, id, '/ctx  one two ');
    expect(done.run.status).toBe('completed');
    const text = done.result.text;
    expect(text).toContain('args=[one two]');
    expect(text).toContain(`sid=${id}`);
    expect(text).toContain(`ws=${t.root}`);
    expect(text).toContain('model=openai/test-model');
    expect(text).toContain('len=2');
    expect(text).toContain('tok=15');
    // The seed's totalCost: 10 prompt and 5 completion tokens at 2 and 10 USD per million.
    expect(text).toContain('cost=0.00007 ');
    expect(text).toMatch(/tools=.*\bread\b/);
    expect(text).toContain('mcp=[]');
    expect(text).toContain('keep={{unknown}}');
    expect(done.result.totalTokens).toBe(0);
    const events = await runEvents(t, id, done.runId);
    expect(ofType(events, 'agent_start')[0]?.payload).toMatchObject({
      prompt: '/ctx  one two ',
      model: 'openai/test-model',
    });
    expect(ofType(events, 'agent_end')[0]?.payload).toMatchObject({
      text,
      status: 'completed',
      usage: { total_tokens: 0 },
    });
    expect(ofType(events, 'run_status_changed').map((e) => e.payload.to)).toEqual(['executing', 'completed']);
    const messages = await history(t, id);
    expect(messages.slice(-2)).toEqual([
      { role: 'user', content: '/ctx  one two ' },
      { role: 'assistant', content: text },
    ]);
    fake.assertDone();
  });

  it('config commands are in every session; GET lists built-ins, config and session commands; DELETE removes', async () => {
    const id = await createSession(t);
    const done = await runAndWait(t, id, '/greet world');
    expect(done.result.text).toBe('hello world');
    await register(id, { name: 'mine', kind: 'template', template: 'x' });
    const list = (await request(t.url).get(`/v1/sessions/${id}/commands`).expect(200)).body.commands as {
      name: string;
      source: string;
      kind: string;
    }[];
    expect(list.map((c) => c.name)).toEqual(['help', 'compact', 'model', 'cost', 'clear', 'greet', 'mine']);
    expect(list.find((c) => c.name === 'greet')).toMatchObject({ source: 'config', kind: 'template' });
    expect(list.find((c) => c.name === 'help')).toMatchObject({ source: 'builtin', kind: 'builtin' });
    const removed = await request(t.url).delete(`/v1/sessions/${id}/commands/mine`).expect(200);
    expect(removed.body.commands.map((c: { name: string }) => c.name)).not.toContain('mine');
    const missing = await request(t.url).delete(`/v1/sessions/${id}/commands/mine`).expect(404);
    expect(missing.body.error.code).toBe('COMMAND_NOT_FOUND');
    expect(missing.body.error.message).toContain('"mine"');
    fake.assertDone();
  });

  it('a webhook command gets the context as JSON and answers {text}; timeout, HTTP error and bad answers fail the run', async () => {
    const id = await createSession(t);
    await register(id, {
      name: 'echo',
      description: 'webhook',
      kind: 'webhook',
      url: hooks.url('/echo'),
      headers: { 'x-secret': 's3' },
    });
    const done = await runAndWait(t, id, '/echo some args');
    expect(done.run.status).toBe('completed');
    expect(done.result.text).toBe(`webhook saw "some args" in ${id} (history 0)`);
    const received = hooks.on('/echo').at(-1);
    expect(received?.body).toMatchObject({
      kind: 'command',
      command: 'echo',
      args: 'some args',
      sessionId: id,
      workspace: t.root,
      model: 'openai/test-model',
      historyLen: 0,
      totalTokens: 0,
      mcpServers: [],
    });
    expect(received?.headers['x-secret']).toBe('s3');

    await register(id, { name: 'slow', kind: 'webhook', url: hooks.url('/slow'), timeoutMs: 200 });
    const started = Date.now();
    const slow = await runAndWait(t, id, '/slow');
    expect(Date.now() - started).toBeLessThan(2500);
    expect(slow.run.status).toBe('failed');
    expect(slow.run.error).toMatchObject({ code: 'COMMAND_FAILED' });
    expect(slow.run.error?.message).toMatch(/\/slow: .*timeout.*200 ms/);

    await register(id, { name: 'bad', kind: 'webhook', url: hooks.url('/bad') });
    const bad = await runAndWait(t, id, '/bad');
    expect(bad.run.error).toMatchObject({ code: 'COMMAND_FAILED' });
    expect(bad.run.error?.message).toContain('bad answer');

    await register(id, { name: 'fail', kind: 'webhook', url: hooks.url('/fail') });
    const failed = await runAndWait(t, id, '/fail');
    expect(failed.run.error?.message).toContain('HTTP 500');
    const events = await runEvents(t, id, failed.runId);
    expect(ofType(events, 'agent_end')[0]?.payload).toMatchObject({
      status: 'failed',
      error: { code: 'COMMAND_FAILED' },
    });
    // A failed command leaves the transcript as it was: only the echo run is in it.
    expect((await history(t, id)).map((m) => m.content)).toEqual(['/echo some args', done.result.text]);
    fake.assertDone();
  });

  it('a websocket command is answered by a host connection of the session (command_request -> command_response)', async () => {
    const id = await createSession(t);
    const host = await subscribe(t.url, id);
    const raw: Record<string, unknown>[] = [];
    host.socket.on('message', (data) => raw.push(JSON.parse(data.toString()) as Record<string, unknown>));
    host.send({ type: 'host_register' });
    const registered = await host.waitFor((e) => e.type === 'host_registered');
    await register(id, { name: 'ask', description: 'ask the host', kind: 'websocket' });
    await register(id, { name: 'askconn', kind: 'websocket', connectionId: String(registered.payload.connection_id) });
    for (const name of ['ask', 'askconn']) {
      const runId = await startRun(t, id, `/${name} please`);
      let frame: Record<string, unknown> | undefined;
      await eventually(
        () =>
          Boolean(
            (frame = raw.find(
              (f) => f.type === 'command_request' && (f.payload as Record<string, unknown>).command === name,
            )),
          ),
        'command_request frame',
      );
      expect(frame).toMatchObject({ kind: 'command', payload: { args: 'please', sessionId: id, workspace: t.root } });
      host.send({ type: 'command_response', request_id: frame?.request_id, text: `host answers ${name}` });
      await eventually(async () => (await getRun(t, id, runId)).status === 'completed', 'command run completed');
      expect((await getRun(t, id, runId)).result?.text).toBe(`host answers ${name}`);
    }
    const unknownConn = await register(id, { name: 'x', kind: 'websocket', connectionId: 'conn_nope' }, 400);
    expect(unknownConn.body.error.message).toContain('connectionId');
    host.close();
    await host.closed;
    // No host left: a clear failed run, not a hang.
    const orphan = await runAndWait(t, id, '/ask again');
    expect(orphan.run.error?.code).toBe('COMMAND_FAILED');
    expect(orphan.run.error?.message).toContain('no WebSocket host');
    fake.assertDone();
  });

  it('built-ins: /help, /compact, /model, /cost and /clear', async () => {
    const id = await createSession(t);
    fake.script({ text: 'answer' });
    await runAndWait(t, id, 'question');
    const help = await runAndWait(t, id, '/help');
    for (const name of ['/help', '/compact', '/model', '/cost', '/clear', '/greet - Say hello'])
      expect(help.result.text).toContain(name);
    // /compact on an empty session answers without a provider call (test/server/compaction.test.ts covers the rest).
    const compact = await runAndWait(t, await createSession(t), '/compact');
    expect(compact.run.status).toBe('completed');
    expect(compact.result.text).toBe('Nothing to compact yet.');
    const model = await runAndWait(t, id, '/model');
    expect(model.result.text).toContain('Model: openai/test-model');
    expect(model.result.text).toContain('openai/other-model');
    const unknownProvider = await runAndWait(t, id, '/model nope/x');
    expect(unknownProvider.run.status).toBe('failed');
    expect(unknownProvider.run.error).toMatchObject({ code: 'COMMAND_FAILED' });
    expect(unknownProvider.run.error?.message).toContain('configured providers: openai');
    const cost = await runAndWait(t, id, '/cost');
    // The fake reports 10 prompt + 5 completion tokens; the model block costs 2 and 10 per million.
    expect(cost.result.text).toContain('Tokens: 15 (prompt 10, completion 5)');
    expect(cost.result.text).toContain('$0.000070');
    const switchTo = await runAndWait(t, id, '/model openai/other-model');
    expect(switchTo.run.status).toBe('completed');
    expect(switchTo.result.text).toContain('Model: openai/other-model (was openai/test-model)');
    // The next run goes to the new model, and session info names it.
    fake.script({ text: 'from other', expect: (req) => expect(req.body.model).toBe('other-model') });
    expect((await runAndWait(t, id, 'which model')).result.text).toBe('from other');
    expect((await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session.model).toBe('openai/other-model');
    expect((await history(t, id)).length).toBeGreaterThan(2);
    const clear = await runAndWait(t, id, '/clear');
    expect(clear.run.status).toBe('completed');
    expect(await history(t, id)).toEqual([]);
    // The session stays: the next run goes to the model with an empty history.
    fake.script({
      text: 'fresh',
      expect: (req) =>
        expect(req.body.messages.filter((m) => m.role !== 'system')).toEqual([{ role: 'user', content: 'again' }]),
    });
    expect((await runAndWait(t, id, 'again')).result.text).toBe('fresh');
    fake.assertDone();
  });

  it('an unknown /word fails listing the known commands; a path-like input goes to the model', async () => {
    const id = await createSession(t);
    const unknown = await runAndWait(t, id, '/nope with args');
    expect(unknown.run.status).toBe('failed');
    expect(unknown.run.error?.code).toBe('UNKNOWN_COMMAND');
    expect(unknown.run.error?.message).toContain('/nope');
    expect(unknown.run.error?.message).toContain('/help');
    expect(unknown.run.error?.message).toContain('/greet');
    fake.assertDone();
    fake.script({ text: 'it holds binaries' }, { text: 'a file' });
    expect((await runAndWait(t, id, '/usr/bin is what?')).result.text).toBe('it holds binaries');
    expect((await runAndWait(t, id, '/etc.conf')).result.text).toBe('a file');
    fake.assertDone();
  });

  it('a command run holds the single-flight lease (SESSION_BUSY) and cancelling it aborts the command', async () => {
    const id = await createSession(t);
    await register(id, { name: 'slowish', kind: 'webhook', url: hooks.url('/slow'), timeoutMs: 10_000 });
    const runId = await startRun(t, id, '/slowish');
    await eventually(() => hooks.on('/slow').length > 0, 'webhook reached');
    const busy = await request(t.url).post(`/v1/sessions/${id}/runs`).send({ input: 'hello' }).expect(409);
    expect(busy.body.error.code).toBe('SESSION_BUSY');
    const started = Date.now();
    expect((await request(t.url).post(`/v1/sessions/${id}/runs/${runId}/cancel`).expect(200)).body.cancelled).toBe(
      true,
    );
    await eventually(async () => (await getRun(t, id, runId)).status === 'cancelled', 'command run cancelled');
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await getRun(t, id, runId)).error?.code).toBe('CANCELLED');
    fake.assertDone();
  });

  it('bad registrations are 400 naming the field', async () => {
    const id = await createSession(t);
    const badName = await register(id, { name: '1bad', kind: 'template', template: 'x' }, 400);
    expect(badName.body.error.message).toContain('name');
    await register(id, { name: 'a'.repeat(65), kind: 'template', template: 'x' }, 400);
    const big = await register(id, { name: 'big', kind: 'template', template: 'x'.repeat(64 * 1024 + 1) }, 400);
    expect(big.body.error.message).toContain('template');
    await register(id, { name: 'edge', kind: 'template', template: 'x'.repeat(64 * 1024) });
    const creds = await register(id, { name: 'creds', kind: 'webhook', url: 'http://user:pass@127.0.0.1:9/x' }, 400);
    expect(creds.body.error.message).toContain('url');
    const noUrl = await register(id, { name: 'nourl', kind: 'webhook' }, 400);
    expect(noUrl.body.error.message).toContain('url');
    const noTemplate = await register(id, { name: 'notemplate', kind: 'template' }, 400);
    expect(noTemplate.body.error.message).toContain('template');
    const badKind = await register(id, { name: 'k', kind: 'shell', template: 'x' }, 400);
    expect(badKind.body.error.message).toContain('kind');
    const shadow = await register(id, { name: 'help', kind: 'template', template: 'mine' }, 400);
    expect(shadow.body.error.message).toContain('name');
    expect(shadow.body.error.message).toContain('override');
    await register(id, { name: 'help', kind: 'template', template: 'my help for {{args}}', override: true });
    expect((await runAndWait(t, id, '/help me')).result.text).toBe('my help for me');
    const list = (await request(t.url).get(`/v1/sessions/${id}/commands`).expect(200)).body.commands as {
      name: string;
      source: string;
      overridesBuiltin: boolean;
    }[];
    expect(list.filter((c) => c.name === 'help')).toEqual([
      expect.objectContaining({ source: 'session', overridesBuiltin: true }),
    ]);
    fake.assertDone();
  });
});

describe('config `commands` in the seed ACL', () => {
  it('accepts snake_case keys and refuses shadowing a built-in without override, naming the field', async () => {
    const { loadConfig } = await import('../../src/config/load-config.js');
    const text =
      'commands = [{ name = "deploy", description = "Deploy", kind = "webhook", url = "https://example.com/hook", timeout_ms = 2500 }]\n';
    const config = await loadConfig({ env: {}, cwd: process.cwd(), configText: text });
    expect(config.commands).toEqual([
      { name: 'deploy', description: 'Deploy', kind: 'webhook', url: 'https://example.com/hook', timeoutMs: 2500 },
    ]);
    await expect(
      loadConfig({
        env: {},
        cwd: process.cwd(),
        configText: 'commands = [{ name = "clear", kind = "template", template = "x" }]\n',
      }),
    ).rejects.toThrow(/commands.*name|override/);
  });
});
