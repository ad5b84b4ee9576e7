import { client, type SessionUpdate, type Stream } from '@agentclientprotocol/sdk';
import { expect } from 'vitest';
import type { TestServer } from '../support/test-server.js';

/** What the editor side saw. */
export interface AcpScenarioResult {
  sessionId: string;
  permissionRequests: Array<{ toolCallId: string; options: string[] }>;
  updates: SessionUpdate[];
}

/** Server config for the scenario: bash asks a human; confirmations are on. */
export const ACP_SCENARIO_CONFIG = {
  defaultPermissionPolicy: { allow: ['read', 'ls'], defaultDecision: 'ask' },
  defaultConfirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000, timeoutAction: 'reject' },
};

/**
 * Drive the ACP SDK's client side over `stream`: initialize, session/new, a prompt whose model calls bash
 * twice with the same command (the first asks, answered "allow always"; the second passes), a second prompt
 * cancelled while the model hangs, session/list.
 */
export async function runAcpScenario(t: TestServer, stream: Stream): Promise<AcpScenarioResult> {
  const updates: SessionUpdate[] = [];
  const permissionRequests: AcpScenarioResult['permissionRequests'] = [];
  const app = client({ name: 'test-editor' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params.update);
    })
    .onRequest('session/request_permission', ({ params }) => {
      permissionRequests.push({ toolCallId: params.toolCall.toolCallId, options: params.options.map((o) => o.kind) });
      return {
        outcome: {
          outcome: 'selected',
          optionId: params.options.find((o) => o.kind === 'allow_always')?.optionId ?? 'none',
        },
      };
    });
  return app.connectWith(stream, async (ctx) => {
    const init = await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    expect(init.protocolVersion).toBe(1);
    expect(init.agentCapabilities).toMatchObject({ loadSession: true, sessionCapabilities: { list: {} } });

    const created = await ctx.request('session/new', { cwd: t.root, mcpServers: [] });
    expect(created.modes?.currentModeId).toBe('general');
    expect(created.modes?.availableModes.map((m) => m.id)).toEqual(
      expect.arrayContaining(['general', 'explore', 'plan']),
    );
    const sessionId = created.sessionId;

    t.fake.script(
      { toolCalls: [{ id: 'call_1', name: 'bash', arguments: { command: 'echo acp-one' } }] },
      { toolCalls: [{ id: 'call_2', name: 'bash', arguments: { command: 'echo acp-one' } }] },
      { text: 'all done', chunks: 2 },
    );
    const answered = await ctx.request('session/prompt', {
      sessionId,
      prompt: [{ type: 'text', text: 'run it twice' }],
    });
    expect(answered.stopReason).toBe('end_turn');
    // One ask, answered "allow always": the identical second call did not ask.
    expect(permissionRequests).toEqual([
      { toolCallId: 'call_1', options: ['allow_once', 'allow_always', 'reject_once'] },
    ]);
    const finished = updates.filter((u) => u.sessionUpdate === 'tool_call_update' && u.status === 'completed');
    expect(finished.map((u) => (u as { toolCallId: string }).toolCallId)).toEqual(['call_1', 'call_2']);
    expect(JSON.stringify(finished[0])).toContain('acp-one');
    expect(updates.filter((u) => u.sessionUpdate === 'tool_call').map((u) => (u as { kind?: string }).kind)).toEqual([
      'execute',
      'execute',
    ]);
    const text = updates
      .flatMap((u) => (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : []))
      .join('');
    expect(text).toBe('all done');

    // Cancel: the model hangs; session/cancel ends the prompt with stopReason "cancelled".
    t.fake.script({ hang: true });
    const pendingPrompt = ctx.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hang' }] });
    await t.fake.waitForRequests(4);
    await ctx.notify('session/cancel', { sessionId });
    expect((await pendingPrompt).stopReason).toBe('cancelled');

    const listed = await ctx.request('session/list', {});
    expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
    return { sessionId, permissionRequests, updates };
  });
}

/** session/load over a fresh connection: the history comes back as session/update notifications. */
export async function loadAcpSession(stream: Stream, sessionId: string, cwd: string): Promise<SessionUpdate[]> {
  const updates: SessionUpdate[] = [];
  const app = client({ name: 'test-editor-reload' }).onNotification('session/update', ({ params }) => {
    expect(params.sessionId).toBe(sessionId);
    updates.push(params.update);
  });
  return app.connectWith(stream, async (ctx) => {
    await ctx.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const loaded = await ctx.request('session/load', { sessionId, cwd, mcpServers: [] });
    expect(loaded?.modes?.currentModeId).toBe('general');
    return updates;
  });
}

/** The replayed history of the scenario's session, as asserted by both transports' tests. */
export function expectScenarioHistory(updates: SessionUpdate[]): void {
  const users = updates.flatMap((u) =>
    u.sessionUpdate === 'user_message_chunk' && u.content.type === 'text' ? [u.content.text] : [],
  );
  expect(users[0]).toBe('run it twice');
  expect(
    updates.filter((u) => u.sessionUpdate === 'tool_call').map((u) => (u as { toolCallId: string }).toolCallId),
  ).toEqual(['call_1', 'call_2']);
  const agentText = updates.flatMap((u) =>
    u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : [],
  );
  expect(agentText).toContain('all done');
}
