import {
  client,
  type ClientContext,
  type ContentBlock,
  type PromptResponse,
  type RequestPermissionRequest,
} from '@agentclientprotocol/sdk';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startFakeProvider, type RecordedRequest } from '../support/fake-provider.js';
import { imageModelProviders } from '../support/image-model.js';
import { toolMessage, useTestServers } from '../support/run-helpers.js';
import type { TestServer } from '../support/test-server.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const wsUrl = (httpUrl: string) => `${httpUrl.replace(/^http/, 'ws')}/acp`;

function userContents(req: RecordedRequest): unknown[] {
  return req.body.messages.filter((m) => m.role === 'user').map((m) => m.content);
}

/** An editor over the WebSocket: initialize, session/new, then `work`. */
async function editor(
  t: TestServer,
  work: (ctx: ClientContext, sessionId: string, init: Record<string, unknown>) => Promise<void>,
): Promise<void> {
  const app = client({ name: 'test-editor' }).onNotification('session/update', () => undefined);
  await app.connectWith(createWebSocketStream(wsUrl(t.url), { WebSocket }), async (ctx) => {
    const init = await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await ctx.request('session/new', { cwd: t.root, mcpServers: [] });
    await work(ctx, sessionId, init.agentCapabilities as Record<string, unknown>);
  });
}

const prompt = (ctx: ClientContext, sessionId: string, blocks: ContentBlock[]): Promise<PromptResponse> =>
  ctx.request('session/prompt', { sessionId, prompt: blocks });

describe('ACP: images and prompts while a run is active', () => {
  const start = useTestServers();

  it('advertises images; an image block reaches the provider as an image part', async () => {
    const fake = await startFakeProvider();
    const t = await start({
      fake,
      config: {
        providers: imageModelProviders(fake),
      },
    });
    try {
      await editor(t, async (ctx, sessionId, init) => {
        expect(init.promptCapabilities).toEqual({ image: true, audio: false, embeddedContext: true });
        fake.script({ text: 'a pixel' });
        const answered = await prompt(ctx, sessionId, [
          { type: 'text', text: 'what is this?' },
          { type: 'image', mimeType: 'image/png', data: PNG },
        ]);
        expect(answered.stopReason).toBe('end_turn');
        expect(userContents(fake.requests.at(-1)!).at(-1)).toEqual([
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        ]);
        // Bytes that are not the declared type are refused naming the block, before any provider call.
        const before = fake.requests.length;
        const refused = await prompt(ctx, sessionId, [
          { type: 'text', text: 'and this?' },
          { type: 'image', mimeType: 'image/gif', data: PNG },
        ]).then(
          () => undefined,
          (error: unknown) => error as { message?: string; data?: { error?: { message?: string } } },
        );
        expect(JSON.stringify(refused)).toContain('prompt.1.mediaType: declared image/gif');
        expect(fake.requests.length).toBe(before);
      });
      fake.assertDone();
    } finally {
      await fake.close();
    }
  });

  it('a model without image input refuses an image block by name; nothing runs', async () => {
    const t = await start();
    await editor(t, async (ctx, sessionId) => {
      const refused = await prompt(ctx, sessionId, [
        { type: 'text', text: 'look' },
        { type: 'image', mimeType: 'image/png', data: PNG },
      ]).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(JSON.stringify(refused)).toContain('prompt.1: model');
      expect(JSON.stringify(refused)).toContain('does not accept images');
    });
    expect(t.fake.requests).toHaveLength(0);
  });

  it('a second prompt while a run is active steers it at the next safe point; both answer end_turn', async () => {
    const t = await start({ config: { defaultPermissionPolicy: { allow: ['ls'], defaultDecision: 'ask' } } });
    await editor(t, async (ctx, sessionId) => {
      t.fake.script(
        { toolCalls: [{ id: 'c_ls', name: 'ls', arguments: {} }], delayMs: 300 },
        { text: 'steered answer' },
      );
      const first = prompt(ctx, sessionId, [{ type: 'text', text: 'list the files' }]);
      await t.fake.waitForRequests(1);
      const second = await prompt(ctx, sessionId, [{ type: 'text', text: 'only the markdown ones' }]);
      expect(second.stopReason).toBe('end_turn');
      expect(second._meta).toMatchObject({ a3s: { applied: true } });
      expect((await first).stopReason).toBe('end_turn');
      // One run: the steer joined it as a user message before its second provider call.
      expect(t.fake.requests).toHaveLength(2);
      expect(userContents(t.fake.requests[1]!)).toEqual(['list the files', 'only the markdown ones']);
      // With a safe point still to come but a run that ends without one, the prompt runs on its own.
      t.fake.script({ text: 'plain', delayMs: 300 }, { text: 'on its own' });
      const third = prompt(ctx, sessionId, [{ type: 'text', text: 'say plain' }]);
      await t.fake.waitForRequests(3);
      const fourth = await prompt(ctx, sessionId, [{ type: 'text', text: 'then this' }]);
      expect((await third).stopReason).toBe('end_turn');
      expect(fourth.stopReason).toBe('end_turn');
      expect(userContents(t.fake.requests[3]!).at(-1)).toBe('then this');
    });
    t.fake.assertDone();
  });

  it('a question with options is a session/request_permission whose choice answers it', async () => {
    const t = await start();
    const asked: RequestPermissionRequest[] = [];
    const app = client({ name: 'test-editor' })
      .onNotification('session/update', () => undefined)
      .onRequest('session/request_permission', ({ params }) => {
        asked.push(params);
        return { outcome: { outcome: 'selected', optionId: params.options[1]?.optionId ?? 'none' } };
      });
    await app.connectWith(createWebSocketStream(wsUrl(t.url), { WebSocket }), async (ctx) => {
      await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = await ctx.request('session/new', { cwd: t.root, mcpServers: [] });
      t.fake.script(
        {
          toolCalls: [
            { id: 'c_q', name: 'ask_user', arguments: { question: 'Which database?', options: ['sqlite', 'pg'] } },
          ],
        },
        { text: 'pg then' },
      );
      expect((await prompt(ctx, sessionId, [{ type: 'text', text: 'set up a db' }])).stopReason).toBe('end_turn');
    });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ toolCall: { toolCallId: 'c_q', title: 'Which database?' } });
    expect(asked[0]?.options.map((o) => o.name)).toEqual(['sqlite', 'pg']);
    expect(toolMessage(t, 'c_q')).toContain('The user chose: pg');
    t.fake.assertDone();
  });

  it('an editor that takes form elicitations is asked a free-text question with elicitation/create', async () => {
    const t = await start();
    const asked: Array<{ message: string; toolCallId?: string | null }> = [];
    const app = client({ name: 'test-editor' })
      .onNotification('session/update', () => undefined)
      .onRequest('elicitation/create', ({ params }) => {
        asked.push(params as { message: string; toolCallId?: string | null });
        return { action: 'accept', content: { answer: 'zephyr' } };
      });
    await app.connectWith(createWebSocketStream(wsUrl(t.url), { WebSocket }), async (ctx) => {
      await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: { elicitation: { form: {} } } });
      const { sessionId } = await ctx.request('session/new', { cwd: t.root, mcpServers: [] });
      t.fake.script(
        { toolCalls: [{ id: 'c_name', name: 'ask_user', arguments: { question: 'Name the project?' } }] },
        { text: 'named' },
      );
      expect((await prompt(ctx, sessionId, [{ type: 'text', text: 'start' }])).stopReason).toBe('end_turn');
    });
    expect(asked).toEqual([expect.objectContaining({ message: 'Name the project?', toolCallId: 'c_name' })]);
    expect(toolMessage(t, 'c_name')).toContain('The user answered: zephyr');
    t.fake.assertDone();
  });

  it('a declined elicitation settles the question declined: the turn goes on at once', async () => {
    const t = await start();
    const app = client({ name: 'test-editor' })
      .onNotification('session/update', () => undefined)
      .onRequest('elicitation/create', () => ({ action: 'decline' }));
    await app.connectWith(createWebSocketStream(wsUrl(t.url), { WebSocket }), async (ctx) => {
      await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: { elicitation: { form: {} } } });
      const { sessionId } = await ctx.request('session/new', { cwd: t.root, mcpServers: [] });
      t.fake.script(
        { toolCalls: [{ id: 'c_decl', name: 'ask_user', arguments: { question: 'Name the project?' } }] },
        { text: 'picked one myself' },
      );
      const started = Date.now();
      expect((await prompt(ctx, sessionId, [{ type: 'text', text: 'start' }])).stopReason).toBe('end_turn');
      // Not left to wait for the question's timeout (the confirmation policy's, minutes by default).
      expect(Date.now() - started).toBeLessThan(10_000);
    });
    expect(toolMessage(t, 'c_decl')).toContain('The user declined to answer');
    t.fake.assertDone();
  });
});
