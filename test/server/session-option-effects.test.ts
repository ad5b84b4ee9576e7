import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { LimitsSchema } from '../../src/config/limits-config.js';
import type { RecordedRequest } from '../support/fake-provider.js';
import { createSession, ofType, runAndWait, runEvents, useTestServers } from '../support/run-helpers.js';

const start = useTestServers();
type Msg = { role: string; content?: unknown };
const systemPrompt = (req: RecordedRequest) =>
  String((req.body.messages as Msg[]).find((m) => m.role === 'system')?.content ?? '');

describe('SessionOptions that shape the provider request', () => {
  it('model and temperature are sent to the provider; role, guidelines, responseStyle and extra fill the system prompt', async () => {
    const t = await start();
    const id = await createSession(t, {
      model: 'openai/other-model',
      temperature: 0.3,
      role: 'You are ROLE-MARK, a release engineer.',
      guidelines: 'GUIDE-MARK: never push on Fridays.',
      responseStyle: 'STYLE-MARK: bullet points only.',
      extra: 'EXTRA-MARK: the repo is a monorepo.',
    });
    const plain = await createSession(t);
    t.fake.script({ text: 'ok' }, { text: 'ok' });
    await runAndWait(t, id, 'hi');
    await runAndWait(t, plain, 'hi');
    const [shaped, unshaped] = t.fake.requests;
    expect(shaped.body.temperature).toBe(0.3);
    expect(shaped.body.model).toBe('other-model');
    expect(unshaped.body.model).toBe('test-model');
    for (const mark of ['ROLE-MARK', 'GUIDE-MARK', 'STYLE-MARK', 'EXTRA-MARK']) {
      expect(systemPrompt(shaped)).toContain(mark);
      expect(systemPrompt(unshaped)).not.toContain(mark);
    }
    expect(unshaped.body.temperature).not.toBe(0.3);
    t.fake.assertDone();
  });
});

describe('SessionOptions labels', () => {
  it('tenantId, principal, agentTemplateId and correlationId label every event of the session', async () => {
    const t = await start();
    const id = await createSession(t, {
      tenantId: 'default',
      principal: 'anonymous',
      agentTemplateId: 'tmpl-7',
      correlationId: 'corr-42',
    });
    t.fake.script({ text: 'ok' });
    const { runId } = await runAndWait(t, id, 'hi');
    const events = await runEvents(t, id, runId);
    expect(events.length).toBeGreaterThan(2);
    for (const event of events)
      expect(event.metadata).toMatchObject({
        tenant_id: 'default',
        principal: 'anonymous',
        agent_template_id: 'tmpl-7',
        correlation_id: 'corr-42',
      });
    const info = (await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session;
    expect(JSON.stringify(info)).toContain('tmpl-7');
    t.fake.assertDone();
  });
});

describe('artifactStoreLimits', () => {
  it('maxArtifacts bounds the artifacts this session keeps (below the server bound): the oldest is evicted', async () => {
    const t = await start({ config: { limits: LimitsSchema.parse({ toolOutputBytes: 1024 }) } });
    const id = await createSession(t, { artifactStoreLimits: { maxArtifacts: 1 } });
    const ids: string[] = [];
    for (const tag of ['first', 'second']) {
      const out = await request(t.url)
        .post(`/v1/sessions/${id}/tools/bash`)
        .send({ args: { command: `for i in $(seq 40); do echo "${tag} $i ${'y'.repeat(40)}"; done` } })
        .expect(200);
      expect(out.body.truncated).toBe(true);
      ids.push(String(out.body.artifactId));
    }
    const evicted = await request(t.url).get(`/v1/sessions/${id}/artifacts/${ids[0]}`).expect(404);
    expect(evicted.body.error.message).toContain('evicted');
    expect(
      (await request(t.url).get(`/v1/sessions/${id}/artifacts/${ids[1]}`).expect(200)).body.artifact.content,
    ).toContain('second 40');
  });
});

describe('autoCompactThreshold', () => {
  // About 1,000 estimated tokens of file content.
  const BIG = `${'big-line '.repeat(9)}\n`.repeat(44);
  const read = (id: string, file: string) => ({ id, name: 'read', arguments: { file_path: file } });
  const isSummary = (req: RecordedRequest) =>
    String((req.body.messages[0] as Msg | undefined)?.content).includes('context-compaction engine');

  it('sets where auto-compaction starts: 1,720 of 2,000 tokens compacts at 0.8, not at 0.95', async () => {
    const t = await start({ files: { 'big.txt': BIG, 'a.txt': 'alpha\n' } });
    for (const [threshold, compacts] of [
      [0.8, true],
      [0.95, false],
    ] as const) {
      const id = await createSession(t, { autoCompact: true, maxContextTokens: 2000, autoCompactThreshold: threshold });
      const before = t.fake.requests.length;
      t.fake.script(
        { toolCalls: [read(`b${threshold}`, 'big.txt')], usage: { prompt_tokens: 100, completion_tokens: 10 } },
        { toolCalls: [read(`a${threshold}`, 'a.txt')], usage: { prompt_tokens: 1700, completion_tokens: 20 } },
        ...(compacts ? [{ when: isSummary, text: 'SUMMARY: read big.txt.' }] : []),
        { text: 'all read' },
      );
      const { runId, result } = await runAndWait(t, id, 'read the files');
      expect(result.text).toBe('all read');
      const sent = t.fake.requests.slice(before);
      expect(sent.some(isSummary), String(threshold)).toBe(compacts);
      expect(ofType(await runEvents(t, id, runId), 'context_compacted'), String(threshold)).toHaveLength(
        compacts ? 1 : 0,
      );
    }
    t.fake.assertDone();
  });
});
