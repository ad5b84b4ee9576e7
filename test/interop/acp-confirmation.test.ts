import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { client, type RequestPermissionRequest } from '@agentclientprotocol/sdk';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { loadConfig } from '../../src/config/load-config.js';
import { toolMessage, useTestServers } from '../support/run-helpers.js';
import type { TestServer } from '../support/test-server.js';

const wsUrl = (httpUrl: string) => `${httpUrl.replace(/^http/, 'ws')}/acp`;

/** An editor that answers each permission request with the next of `answers` ("allow_once", "reject_once"). */
async function editorSession(
  t: TestServer,
  answers: string[],
  work: (ctx: {
    sessionId: string;
    prompt: (text: string) => Promise<string>;
    init: Record<string, unknown>;
  }) => Promise<void>,
): Promise<RequestPermissionRequest[]> {
  const asked: RequestPermissionRequest[] = [];
  const app = client({ name: 'test-editor' })
    .onNotification('session/update', () => undefined)
    .onRequest('session/request_permission', ({ params }) => {
      asked.push(params);
      const kind = answers.shift() ?? 'reject_once';
      return {
        outcome: { outcome: 'selected', optionId: params.options.find((o) => o.kind === kind)?.optionId ?? 'none' },
      };
    });
  await app.connectWith(createWebSocketStream(wsUrl(t.url), { WebSocket }), async (ctx) => {
    const init = await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await ctx.request('session/new', { cwd: t.root, mcpServers: [] });
    await work({
      sessionId,
      init: init.agentCapabilities as Record<string, unknown>,
      prompt: async (text) =>
        (await ctx.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })).stopReason,
    });
  });
  return asked;
}

describe('ACP sessions ask the editor: confirmation is on, the editor answers', () => {
  const start = useTestServers();

  it('under the built-in policy a write asks the editor (allowed) and a bash call asks it (rejected)', async () => {
    // No defaultConfirmationPolicy: the ACP session turns confirmation on by itself.
    const t = await start({ config: { defaultPermissionPolicy: undefined } });
    let sessionId = '';
    const asked = await editorSession(t, ['allow_once', 'reject_once'], async (ctx) => {
      sessionId = ctx.sessionId;
      expect(ctx.init.promptCapabilities).toEqual({ image: true, audio: false, embeddedContext: true });
      t.fake.script(
        { toolCalls: [{ id: 'w1', name: 'write', arguments: { file_path: 'from-editor.txt', content: 'ok\n' } }] },
        { toolCalls: [{ id: 'b1', name: 'bash', arguments: { command: 'touch pwned' } }] },
        { text: 'done' },
      );
      expect(await ctx.prompt('write then bash')).toBe('end_turn');
    });
    expect(asked.map((a) => [a.toolCall.toolCallId, a.toolCall.kind])).toEqual([
      ['w1', 'edit'],
      ['b1', 'execute'],
    ]);
    expect(asked[0]?.options.map((o) => o.kind)).toEqual(['allow_once', 'allow_always', 'reject_once']);
    expect(readFileSync(join(t.root, 'from-editor.txt'), 'utf8')).toBe('ok\n');
    expect(existsSync(join(t.root, 'pwned'))).toBe(false);
    expect(toolMessage(t, 'b1')).toContain('rejected in the editor');
    // The session is the kernel's: its run over REST is the prompt's.
    const runs = (await request(t.url).get(`/v1/sessions/${sessionId}/runs`).expect(200)).body.runs as unknown[];
    expect(runs).toHaveLength(1);
    t.fake.assertDone();
  });

  it('acp_confirmation_policy { enabled = false } makes asks denials again; the loader knows the key', async () => {
    const config = await loadConfig({
      env: {},
      cwd: process.cwd(),
      configText: 'acp_confirmation_policy {\n  enabled = false\n  default_timeout_ms = 5000\n}\n',
    });
    expect(config.acpConfirmationPolicy).toEqual({ enabled: false, defaultTimeoutMs: 5000, timeoutAction: 'reject' });
    await expect(
      loadConfig({
        env: {},
        cwd: process.cwd(),
        configText: 'acp_confirmation_policy {\n  timeout_action = "auto_approve"\n}\n',
      }),
    ).rejects.toThrow(/timeout_action must be "reject"/);

    const t = await start({
      config: { defaultPermissionPolicy: undefined, acpConfirmationPolicy: config.acpConfirmationPolicy },
    });
    const asked = await editorSession(t, [], async (ctx) => {
      t.fake.script(
        { toolCalls: [{ id: 'w2', name: 'write', arguments: { file_path: 'silent.txt', content: 'x' } }] },
        { text: 'done' },
      );
      expect(await ctx.prompt('write')).toBe('end_turn');
    });
    expect(asked).toEqual([]);
    expect(toolMessage(t, 'w2')).toContain('confirmationPolicy.enabled is false');
    expect(existsSync(join(t.root, 'silent.txt'))).toBe(false);
    t.fake.assertDone();
  });
});

describe('ACP promptCapabilities say what works', () => {
  const start = useTestServers();

  it('text, embedded text resources and resource links reach the model; an image to a text-only model is refused', async () => {
    const t = await start();
    const app = client({ name: 'test-editor' }).onNotification('session/update', () => undefined);
    await app.connectWith(createWebSocketStream(wsUrl(t.url), { WebSocket }), async (ctx) => {
      const init = await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      expect(init.agentCapabilities?.promptCapabilities).toEqual({ image: true, audio: false, embeddedContext: true });
      const { sessionId } = await ctx.request('session/new', { cwd: t.root, mcpServers: [] });
      t.fake.script({ text: 'seen' });
      const answered = await ctx.request('session/prompt', {
        sessionId,
        prompt: [
          { type: 'text', text: 'look at' },
          { type: 'resource', resource: { uri: 'file:///w/a.ts', text: 'export const a = 1;' } },
          { type: 'resource_link', name: 'b.ts', uri: 'file:///w/b.ts' },
        ],
      });
      expect(answered.stopReason).toBe('end_turn');
      const user = (t.fake.requests[0]?.body.messages as { role: string; content: string }[]).find(
        (m) => m.role === 'user',
      );
      expect(user?.content).toBe('look at\n\nfile:///w/a.ts:\nexport const a = 1;\n\n[b.ts](file:///w/b.ts)');
      await expect(
        ctx.request('session/prompt', {
          sessionId,
          prompt: [
            { type: 'text', text: 'and this' },
            { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
          ],
        }),
      ).rejects.toMatchObject({ data: { error: { code: 'VALIDATION_ERROR', details: { field: 'prompt.1' } } } });
    });
    t.fake.assertDone();
  });
});
