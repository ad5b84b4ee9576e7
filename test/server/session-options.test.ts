import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { createSession, eventually, runAndWait, runEvents, startRun, useTestServers } from '../support/run-helpers.js';
import { startTestServer, tempDir } from '../support/test-server.js';
import { SEED_EXAMPLE_FILES, SEED_EXAMPLE_PLUS, seedSessionOptions } from './fixtures/seed-session-options.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { RETENTION_CEILINGS } from '../../src/protocol/session-options.js';

const start = useTestServers();

const SESSIONS = 'token-options-sessions-00001';
const HOST = 'token-options-hostdirect-001';
const TOKENS = [
  { token: SESSIONS, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
  { token: HOST, principal: 'alice-ci', tenantId: 'tenant-a', scopes: ['sessions', 'host_direct'] },
];
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("the seed's SessionOptions example", () => {
  it('is 201 verbatim (every option it names is built), answers the seed session info and is stored in the durable backend', async () => {
    const t = await start({ files: SEED_EXAMPLE_FILES });
    const options = seedSessionOptions(t.root);
    const created = await request(t.url).post('/v1/sessions').send(options).expect(201);
    const info = created.body.session;
    expect(info).toMatchObject({
      id: 'docs-contract',
      workspace: t.root,
      initWarning: null,
      // memoryStore {type: 'file'} of the example is built.
      hasMemory: true,
      hasQueue: false,
      agent: null,
      currentRun: null,
      sessionStore: 'file',
      securityProvider: 'default',
      autoSave: true,
    });
    expect((await request(t.url).get('/v1/sessions/docs-contract').expect(200)).body.session).toEqual(info);
    // builtinSkills (an empty catalog), skillDirs and inlineSkills of the example are built.
    const skills = (await request(t.url).get('/v1/sessions/docs-contract/skills').expect(200)).body.skills as {
      name: string;
      source: string;
    }[];
    expect(skills.map((skill) => [skill.name, skill.source])).toEqual([
      ['release-notes', 'session'],
      ['strict-release-review', 'inline'],
    ]);
    const stored = await t.server.ctx.store.load(sessionKey('default', 'docs-contract'));
    expect(stored?.session.options).toMatchObject({
      maxToolRounds: 24,
      planningMode: 'disabled',
      sessionStore: { type: 'file' },
    });
    // The loop options reached the session's governance.
    expect(
      t.server.ctx.agent.getSession('docs-contract', {
        principal: 'x',
        tenantId: 'default',
        scopes: new Set(['admin']),
      } as never).config.governance,
    ).toMatchObject({
      maxToolRounds: 24,
      maxParseRetries: 3,
      toolTimeoutMs: 120000,
      circuitBreakerThreshold: 4,
      continuationEnabled: true,
      maxContinuationTurns: 3,
      maxExecutionTimeMs: 300000,
      autoCompact: true,
      autoCompactThreshold: 0.75,
      maxContextTokens: 200000,
    });
  });

  it('the "plus" part (goalTracking, agent, queue, retention, labels) is built too: 201 with everything', async () => {
    const t = await start({ files: SEED_EXAMPLE_FILES });
    const all = { ...seedSessionOptions(t.root), ...SEED_EXAMPLE_PLUS };
    const created = await request(t.url).post('/v1/sessions').send(all).expect(201);
    expect(created.body.session).toMatchObject({
      id: 'docs-contract',
      labels: { principal: 'principal-example', correlationId: 'trace-example' },
      initWarning: null,
    });
  });
});

describe('SessionOptions validation', () => {
  it('a misspelt option is a 400 naming it and the option meant; a wrong type names the field', async () => {
    const t = await start();
    const typo = await request(t.url).post('/v1/sessions').send({ maxToolRound: 5 }).expect(400);
    expect(typo.body.error.code).toBe('VALIDATION_ERROR');
    expect(typo.body.error.message).toContain('unknown option "maxToolRound" (did you mean "maxToolRounds"?)');
    const far = await request(t.url).post('/v1/sessions').send({ zzzzzzzzzzzz: 1 }).expect(400);
    expect(far.body.error.message).toContain('unknown option "zzzzzzzzzzzz"');
    expect(far.body.error.message).not.toContain('did you mean');
    const cases: [Record<string, unknown>, string][] = [
      [{ planningMode: 'sometimes' }, 'body.planningMode'],
      [{ builtinSkills: 'yes' }, 'body.builtinSkills'],
      [{ autoCompactThreshold: 2 }, 'body.autoCompactThreshold'],
      [{ taskPriority: 'asap' }, 'body.taskPriority'],
      [{ inlineSkills: [{ name: 'x' }] }, 'body.inlineSkills.0.content'],
      [{ sessionStore: { type: 'redis' } }, 'body.sessionStore.type'],
      [{ memoryStore: { type: 'sqlite' } }, 'body.memoryStore.type'],
      [{ securityProvider: { type: 'strict' } }, 'body.securityProvider.type'],
      [{ retentionLimits: { maxRunsRetained: 0 } }, 'body.retentionLimits.maxRunsRetained'],
      [{ retentionLimits: { maxRunsRetained: 100_001 } }, 'body.retentionLimits.maxRunsRetained'],
      [{ retentionLimits: { maxEventsPerRun: 1_000_001 } }, 'body.retentionLimits.maxEventsPerRun'],
    ];
    for (const [body, field] of cases) {
      const res = await request(t.url).post('/v1/sessions').send(body).expect(400);
      expect(res.body.error.code, JSON.stringify(body)).toBe('VALIDATION_ERROR');
      expect(res.body.error.message, JSON.stringify(body)).toContain(field);
    }
    // Stores are never client paths.
    const path = await request(t.url)
      .post('/v1/sessions')
      .send({ sessionStore: { type: 'file', path: '/tmp/elsewhere' } })
      .expect(400);
    expect(path.body.error.message).toContain('body.sessionStore');
    expect(path.body.error.message).toContain('path');
    expect((await request(t.url).get('/v1/sessions').expect(200)).body.sessions).toEqual([]);
  });

  it('values that ask for nothing are accepted and change nothing; each value that asks for an unbuilt capability is refused by name', async () => {
    const t = await start();
    const inert = {
      planningMode: 'disabled',
      planning: false,
      goalTracking: false,
      autoCompact: false,
      builtinSkills: false,
      skillDirs: [],
      inlineSkills: [],
      agentDirs: [],
      workerAgents: [],
      autoDelegation: { enabled: false },
      autoParallel: false,
      manualDelegationEnabled: false,
      llmLogprobs: false,
      llmTopLogprobs: 0,
      thinkingBudget: 0,
      commandEnv: {},
      completionWaivers: [],
      externalObservations: [],
      pathRules: [],
      readOnlySession: false,
      verifierEnabled: false,
      trajectoryIncludeMessages: false,
      enforceActiveSkillToolRestrictions: true,
    };
    const created = await request(t.url).post('/v1/sessions').send(inert).expect(201);
    expect(created.body.session).toMatchObject({ initWarning: null, hasMemory: false, hasQueue: false, agent: null });
    const id = created.body.session.id as string;
    t.fake.script({ text: 'plain' });
    expect((await runAndWait(t, id, 'hi')).result.text).toBe('plain');
    // The tools and the prompt are those of an ordinary session.
    const plain = await createSession(t);
    const tools = async (sid: string) =>
      ((await request(t.url).get(`/v1/sessions/${sid}/tools`).expect(200)).body.tools as { name: string }[]).map(
        (x) => x.name,
      );
    expect(await tools(id)).toEqual(await tools(plain));
    t.fake.script({ text: 'plain too' });
    await runAndWait(t, plain, 'hi');
    const [first, second] = t.fake.requests.slice(-2);
    expect(first.body.messages[0]).toEqual(second.body.messages[0]);
    t.fake.assertDone();

    const asking: [string, unknown][] = [
      ['llmApiTimeoutMs', 1000],
      ['outputLanguage', 'fr'],
      ['autoDelegation', { enabled: true }],
      ['readOnlySession', true],
      ['verifierEnabled', true],
      ['trajectoryPath', 'trace.jsonl'],
      ['taskPriority', 'background'],
    ];
    for (const [name, value] of asking) {
      const res = await request(t.url)
        .post('/v1/sessions')
        .send({ [name]: value })
        .expect(400);
      expect(res.body.error, `${name}: ${JSON.stringify(value)}`).toMatchObject({
        code: 'UNSUPPORTED_OPTION',
        details: { field: name, options: [name] },
      });
    }
    // taskPriority says why: there is no Agent-wide scheduler to give a priority to.
    const priority = await request(t.url).post('/v1/sessions').send({ taskPriority: 'urgent' }).expect(400);
    expect(priority.body.error.details.reasons.taskPriority).toContain('no Agent-wide task scheduler');
    expect(priority.body.error.message).toContain('taskPriority: this server has no Agent-wide task scheduler');
    // The threshold of a compaction nobody asked for is inert (and said so).
    const alone = await request(t.url).post('/v1/sessions').send({ autoCompactThreshold: 0.5 }).expect(201);
    expect(alone.body.session.initWarning).toContain('autoCompactThreshold has no effect');
    // planningMode wins over the legacy flag.
    const legacy = await request(t.url)
      .post('/v1/sessions')
      .send({ planningMode: 'disabled', planning: true })
      .expect(201);
    expect(legacy.body.session.initWarning).toContain('planningMode "disabled" wins');
  });
});

describe('retentionLimits: the seed names are aliases, and no name switches a bound off', () => {
  it('maxRunsRetained bounds the runs kept; a conflicting pair is a 400', async () => {
    const t = await start();
    const id = await createSession(t, { retentionLimits: { maxRunsRetained: 2 } });
    for (const text of ['one', 'two', 'three']) {
      t.fake.script({ text });
      await runAndWait(t, id, text);
    }
    const runs = (await request(t.url).get(`/v1/sessions/${id}/runs`).expect(200)).body.runs as { input: string }[];
    expect(runs.map((r) => r.input)).toEqual(['two', 'three']);

    const conflict = await request(t.url)
      .post('/v1/sessions')
      .send({ retentionLimits: { maxRuns: 5, maxRunsRetained: 6 } })
      .expect(400);
    expect(conflict.body.error).toMatchObject({
      code: 'SESSION_CONFIGURATION_ERROR',
      details: { field: 'retentionLimits.maxRunsRetained' },
    });
    t.fake.assertDone();
  });

  it('unbounded: true gives the bounds it does not name their ceiling instead of the server default; a named one holds', async () => {
    const t = await start({ config: { limits: { maxRuns: 2 } } });
    const plain = await createSession(t);
    const unbounded = await request(t.url)
      .post('/v1/sessions')
      .send({ retentionLimits: { unbounded: true, maxTraceEvents: 2 } })
      .expect(201);
    expect(unbounded.body.session.initWarning).toContain('retentionLimits.unbounded');
    expect(unbounded.body.session.initWarning).toContain(`maxRuns ${RETENTION_CEILINGS.maxRuns}`);
    const uid = unbounded.body.session.id as string;
    for (const text of ['one', 'two', 'three']) {
      for (const id of [plain, uid]) {
        t.fake.script({ text });
        await runAndWait(t, id, text);
      }
    }
    const inputs = async (id: string) =>
      ((await request(t.url).get(`/v1/sessions/${id}/runs`).expect(200)).body.runs as { input: string }[]).map(
        (r) => r.input,
      );
    // The server's limits.maxRuns (2) bounds the plain session; unbounded lifts it to its ceiling.
    expect(await inputs(plain)).toEqual(['two', 'three']);
    expect(await inputs(uid)).toEqual(['one', 'two', 'three']);
    // maxTraceEvents, named, still holds under unbounded: true.
    expect((await request(t.url).get(`/v1/sessions/${uid}/trace?limit=1000`).expect(200)).body.events).toHaveLength(2);
    t.fake.assertDone();
  });

  it('maxEventBytesPerRun keeps the newest events of a run whose payloads fit, dropping the oldest first', async () => {
    const t = await start();
    const bound = 5000;
    const bounded = await createSession(t, { retentionLimits: { maxEventBytesPerRun: bound } });
    const plain = await createSession(t);
    const answer = 'x'.repeat(3000);
    const pages: { events: EventEnvelope[]; retentionGap: unknown }[] = [];
    for (const id of [bounded, plain]) {
      t.fake.script({ text: answer, chunks: 12 });
      const { runId } = await runAndWait(t, id, 'go');
      pages.push((await request(t.url).get(`/v1/sessions/${id}/runs/${runId}/events?after=-1&limit=1000`)).body);
    }
    const [kept, all] = pages;
    const bytes = (events: EventEnvelope[]) =>
      events.reduce((sum, e) => sum + Buffer.byteLength(JSON.stringify(e.payload)), 0);
    expect(all.retentionGap).toBeNull();
    expect(bytes(all.events)).toBeGreaterThan(bound);
    expect(kept.retentionGap).toMatchObject({ firstAvailableSequence: expect.any(Number) });
    expect(bytes(kept.events)).toBeLessThanOrEqual(bound);
    // The newest events are the ones kept: the run's last event is there, its first text deltas are not.
    expect(kept.events.at(-1)?.type).toBe(all.events.at(-1)?.type);
    expect(kept.events.length).toBeLessThan(all.events.length);
    expect(kept.events.map((e) => e.metadata.sequence)).toEqual(
      all.events.slice(all.events.length - kept.events.length).map((e) => e.metadata.sequence),
    );
    t.fake.assertDone();
  });
});

describe('sessionStore', () => {
  it('"memory" keeps the session in this process: never in the durable store, gone after a restart; "file" survives it', async () => {
    // Closed by hand (it is restarted below), so not through `start`.
    const first = await startTestServer();
    const mem = await request(first.url)
      .post('/v1/sessions')
      .send({ sessionId: 'in-memory', autoSave: true, sessionStore: { type: 'memory' } })
      .expect(201);
    expect(mem.body.session.sessionStore).toBe('memory');
    await request(first.url)
      .post('/v1/sessions')
      .send({ sessionId: 'on-disk', autoSave: true, sessionStore: { type: 'file' } })
      .expect(201);
    first.fake.script({ toolCalls: [{ id: 'c1', name: 'ls', arguments: { path: '.' } }] }, { text: 'remembered' });
    await runAndWait(first, 'in-memory', 'look');
    await request(first.url).post('/v1/sessions/in-memory/save').expect(200);
    expect(await first.server.ctx.store.load(sessionKey('default', 'in-memory'))).toBeUndefined();
    expect(await first.server.ctx.store.load(sessionKey('default', 'on-disk'))).toBeDefined();
    const files = readdirSync(join(first.dataDir, 'sessions', 'default'));
    expect(files.some((f) => f.includes('in-memory'))).toBe(false);
    expect(files.some((f) => f.includes('on-disk'))).toBe(true);
    // Its checkpoints stayed in the process too: nothing of it under the data directory.
    const checkpoints = join(first.dataDir, 'checkpoints');
    if (existsSync(checkpoints)) expect(readdirSync(checkpoints).join()).not.toContain('in-memory');

    // Passivated and hydrated again within the process, it keeps its transcript.
    await first.server.ctx.agent.passivate(sessionKey('default', 'in-memory'), 0);
    expect(first.server.ctx.agent.sessionCount).toBe(1);
    const back = (await request(first.url).get('/v1/sessions/in-memory/history').expect(200)).body.messages as {
      content: string;
    }[];
    expect(back.at(-1)?.content).toBe('remembered');
    first.fake.assertDone();
    await first.close();

    const second = await start({ dataDir: first.dataDir, root: first.root });
    expect((await request(second.url).get('/v1/sessions/in-memory').expect(404)).body.error.code).toBe(
      'SESSION_NOT_FOUND',
    );
    expect(
      (await request(second.url).post('/v1/sessions').send({ sessionId: 'in-memory', resume: true }).expect(404)).body
        .error.code,
    ).toBe('SESSION_NOT_FOUND');
    expect((await request(second.url).get('/v1/sessions/on-disk').expect(200)).body.session.sessionStore).toBe('file');
  });

  it('resuming a run of a memory session answers SESSION_STORE_REQUIRED with the seed message; closing it discards it', async () => {
    const t = await start({ files: { 'a.txt': 'alpha\n' } });
    await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 'm1', sessionStore: { type: 'memory' } })
      .expect(201);
    t.fake.script({ toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } }] }, { text: 'done' });
    const { runId } = await runAndWait(t, 'm1', 'read it');
    const resume = await request(t.url).post(`/v1/sessions/m1/runs/${runId}/resume`).send({}).expect(409);
    expect(resume.body.error).toMatchObject({ code: 'SESSION_STORE_REQUIRED', details: { sessionStore: 'memory' } });
    expect(resume.body.error.message).toMatch(/^resume_run requires a session_store/);
    expect(await request(t.url).delete('/v1/sessions/m1').expect(200)).toMatchObject({ body: { closed: true } });
    expect(
      (await request(t.url).post('/v1/sessions').send({ sessionId: 'm1', resume: true }).expect(404)).body.error.code,
    ).toBe('SESSION_NOT_FOUND');
    // The id is free again for a new session.
    await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 'm1', sessionStore: { type: 'memory' } })
      .expect(201);
    t.fake.assertDone();
  });

  it('"file" on a server that keeps sessions in memory is refused naming the field; omitting it works', async () => {
    const t = await start({ config: { storageBackend: 'memory' } });
    const res = await request(t.url)
      .post('/v1/sessions')
      .send({ sessionStore: { type: 'file' } })
      .expect(400);
    expect(res.body.error).toMatchObject({
      code: 'UNSUPPORTED_OPTION',
      details: { field: 'sessionStore.type', storageBackend: 'memory' },
    });
    expect(res.body.error.message).toContain('storage_backend "memory"');
    const plain = await request(t.url).post('/v1/sessions').send({}).expect(201);
    expect(plain.body.session.sessionStore).toBe('file');
    await request(t.url)
      .post('/v1/sessions')
      .send({ sessionStore: { type: 'memory' } })
      .expect(201);
  });

  it('"file" on the file store is accepted without a note and saves there', async () => {
    const t = await start();
    const res = await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 'durable', sessionStore: { type: 'file' } })
      .expect(201);
    expect(res.body.session).toMatchObject({ sessionStore: 'file', initWarning: null });
    await request(t.url).post('/v1/sessions/durable/save').expect(200);
  });
});

describe('securityProvider', () => {
  const SECRET = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';

  it('"default" redacts secrets from tool output; "none" needs host_direct (403 otherwise) and turns redaction off for that session only', async () => {
    const t = await start({ files: { 'env.txt': `key ${SECRET}\n` }, config: { apiTokens: TOKENS } });
    const denied = await request(t.url)
      .post('/v1/sessions')
      .set(bearer(SESSIONS))
      .send({ sessionId: 'open', securityProvider: { type: 'none' } })
      .expect(403);
    expect(denied.body.error).toMatchObject({
      code: 'FORBIDDEN',
      details: { field: 'securityProvider.type', scope: 'host_direct' },
    });
    await request(t.url).get('/v1/sessions/open').set(bearer(SESSIONS)).expect(404);

    const def = await request(t.url)
      .post('/v1/sessions')
      .set(bearer(SESSIONS))
      .send({ sessionId: 'guarded', securityProvider: { type: 'default' } })
      .expect(201);
    expect(def.body.session).toMatchObject({ securityProvider: 'default', initWarning: null });
    const none = await request(t.url)
      .post('/v1/sessions')
      .set(bearer(HOST))
      .send({ sessionId: 'open', securityProvider: { type: 'none' } })
      .expect(201);
    expect(none.body.session.securityProvider).toBe('none');
    expect(none.body.session.initWarning).toContain('not redacted');

    const read = async (sid: string) =>
      (
        await request(t.url)
          .post(`/v1/sessions/${sid}/tools/read`)
          .set(bearer(HOST))
          .send({ args: { file_path: 'env.txt' } })
          .expect(200)
      ).body;
    const guarded = await read('guarded');
    expect(guarded.output).not.toContain(SECRET);
    expect(guarded.output).toContain('[REDACTED]');
    expect(guarded.metadata.redacted_secrets).toBe(1);
    const open = await read('open');
    expect(open.output).toContain(SECRET);
    expect(open.metadata.redacted_secrets).toBeUndefined();
    // A model's call in a run of the "none" session sees the same unredacted output.
    t.fake.script({ toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'env.txt' } }] }, { text: 'ok' });
    const run = await request(t.url)
      .post('/v1/sessions/open/runs')
      .set(bearer(HOST))
      .send({ input: 'read', wait: true })
      .expect(200);
    const toolResult = t.fake.requests.at(-1)?.body.messages.find((m: { role: string }) => m.role === 'tool') as
      { content: string } | undefined;
    expect(toolResult?.content).toContain(SECRET);
    expect(run.body.result.text).toBe('ok');
    t.fake.assertDone();
  });
});

describe('currentRun, cancel and close answers', () => {
  it('info carries currentRun {id, status} while a run is active; POST .../cancel answers whether it cancelled', async () => {
    const t = await start();
    const id = await createSession(t);
    expect((await request(t.url).post(`/v1/sessions/${id}/cancel`).expect(200)).body).toEqual({ cancelled: false });
    t.fake.script({ hang: true });
    const runId = await startRun(t, id, 'wait');
    await t.fake.waitForRequests(1);
    const info = (await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session;
    expect(info.currentRun).toEqual({
      id: runId,
      status: expect.stringMatching(/^(created|planning|executing|verifying)$/),
    });
    expect(info.busy).toBe(true);
    // Another run id is not the active one.
    expect((await request(t.url).post(`/v1/sessions/${id}/runs/run_other/cancel`).expect(200)).body).toEqual({
      cancelled: false,
    });
    expect((await request(t.url).post(`/v1/sessions/${id}/cancel`).expect(200)).body).toEqual({ cancelled: true });
    await eventually(
      async () => (await request(t.url).get(`/v1/sessions/${id}`).expect(200)).body.session.currentRun === null,
      'the run to end',
    );
    expect((await request(t.url).get(`/v1/sessions/${id}/runs/${runId}`).expect(200)).body.run.status).toBe(
      'cancelled',
    );
    // Finished or unknown runs: 200 {cancelled: false}.
    expect((await request(t.url).post(`/v1/sessions/${id}/runs/${runId}/cancel`).expect(200)).body).toEqual({
      cancelled: false,
    });
    expect((await request(t.url).post(`/v1/sessions/${id}/runs/run_unknown/cancel`).expect(200)).body).toEqual({
      cancelled: false,
    });
    expect((await request(t.url).post(`/v1/sessions/${id}/cancel`).expect(200)).body).toEqual({ cancelled: false });
  });

  it('DELETE answers closed: true when it closed an open session, false when it was already closed; cancel on a closed one is 410', async () => {
    // Closed by hand (it is restarted below), so not through `start`.
    const t = await startTestServer();
    const id = await createSession(t, { autoSave: true });
    expect((await request(t.url).delete(`/v1/sessions/${id}`).expect(200)).body).toEqual({ closed: true });
    expect((await request(t.url).delete(`/v1/sessions/${id}`).expect(200)).body).toEqual({ closed: false });
    expect((await request(t.url).post(`/v1/sessions/${id}/cancel`).expect(410)).body.error.code).toBe('SESSION_CLOSED');
    await t.close();
    // After a restart the stored session is known closed: still false.
    const again = await start({ dataDir: t.dataDir, root: t.root });
    expect((await request(again.url).delete(`/v1/sessions/${id}`).expect(200)).body).toEqual({ closed: false });
    expect((await request(again.url).delete('/v1/sessions/never').expect(404)).body.error.code).toBe(
      'SESSION_NOT_FOUND',
    );
  });
});

describe('GET /v1/sessions/:id/trace', () => {
  it("pages the session's event log in session order and matches the snapshot's trace_events", async () => {
    const t = await start({ files: { 'a.txt': 'alpha\n' } });
    const id = await createSession(t);
    t.fake.script({ toolCalls: [{ id: 'r1', name: 'read', arguments: { file_path: 'a.txt' } }] }, { text: 'first' });
    const one = await runAndWait(t, id, 'one');
    t.fake.script({ text: 'second' });
    const two = await runAndWait(t, id, 'two');
    const trace = (await request(t.url).get(`/v1/sessions/${id}/trace?limit=1000`).expect(200)).body
      .events as EventEnvelope[];
    const sequences = trace.map((e) => e.metadata.session_sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    const runEventsOf = async (runId: string) =>
      (await runEvents(t, id, runId)).map((e) => e.metadata.session_sequence);
    const fromRuns = [...(await runEventsOf(one.runId)), ...(await runEventsOf(two.runId))];
    expect(sequences.filter((s) => fromRuns.includes(s))).toEqual(fromRuns);
    expect(trace.some((e) => e.type === 'tool_end')).toBe(true);

    // after and limit page through it.
    const page1 = (await request(t.url).get(`/v1/sessions/${id}/trace?limit=3`).expect(200)).body
      .events as EventEnvelope[];
    expect(page1).toEqual(trace.slice(0, 3));
    const page2 = (
      await request(t.url)
        .get(`/v1/sessions/${id}/trace?after=${page1[2].metadata.session_sequence}&limit=3`)
        .expect(200)
    ).body.events;
    expect(page2).toEqual(trace.slice(3, 6));

    await request(t.url).post(`/v1/sessions/${id}/save`).expect(200);
    const stored = await t.server.ctx.store.load(sessionKey('default', id));
    expect(stored?.trace_events).toEqual(trace);

    const bad = await request(t.url).get(`/v1/sessions/${id}/trace?limit=0`).expect(400);
    expect(bad.body.error.message).toContain('query.limit');
    expect((await request(t.url).get(`/v1/sessions/${id}/trace?after=-1`).expect(400)).body.error.message).toContain(
      'query.after',
    );
    expect((await request(t.url).get('/v1/sessions/nope/trace').expect(404)).body.error.code).toBe('SESSION_NOT_FOUND');
    t.fake.assertDone();
  });

  it('keeps only the newest retentionLimits.maxTraceEvents events', async () => {
    const t = await start();
    const id = await createSession(t, { retentionLimits: { maxTraceEvents: 4 } });
    t.fake.script({ text: 'a' });
    const { runId } = await runAndWait(t, id, 'go');
    const all = await runEvents(t, id, runId);
    expect(all.length).toBeGreaterThan(4);
    const trace = (await request(t.url).get(`/v1/sessions/${id}/trace?limit=1000`).expect(200)).body
      .events as EventEnvelope[];
    expect(trace.map((e) => e.metadata.session_sequence)).toEqual(
      all.slice(-4).map((e) => e.metadata.session_sequence),
    );
    const none = await createSession(t, { retentionLimits: { maxTraceEvents: 0 } });
    expect((await request(t.url).get(`/v1/sessions/${none}/trace`).expect(200)).body.events).toEqual([]);
    t.fake.assertDone();
  });
});

describe('resume: true with options: conflicts are refused, additions are checked as at creation and applied', () => {
  const systemPrompt = (req: { body: { messages: { role: string; content?: unknown }[] } }) =>
    String(req.body.messages.find((m) => m.role === 'system')?.content ?? '');

  it('an option other than the stored one is a 400 naming every such field; the same values resume', async () => {
    const t = await start();
    await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 'r1', autoSave: true, maxToolRounds: 5, inlineSkills: [{ name: 's1', content: 'one' }] })
      .expect(201);
    const refused = await request(t.url)
      .post('/v1/sessions')
      .send({
        sessionId: 'r1',
        resume: true,
        model: 'openai/other-model',
        maxToolRounds: 6,
        inlineSkills: [{ name: 's2', content: 'two' }],
        workspace: tempDir(),
      })
      .expect(400);
    expect(refused.body.error).toMatchObject({
      code: 'SESSION_CONFIGURATION_ERROR',
      details: { field: 'model', fields: ['model', 'workspace', 'maxToolRounds', 'inlineSkills'] },
    });
    expect(refused.body.error.message).toContain('model, workspace, maxToolRounds, inlineSkills');
    // The stored values (and the canonical workspace, the model in effect) resume; labels still relabel.
    const same = await request(t.url)
      .post('/v1/sessions')
      .send({
        sessionId: 'r1',
        resume: true,
        model: 'openai/test-model',
        workspace: t.root,
        maxToolRounds: 5,
        correlationId: 'again',
      })
      .expect(201);
    expect(same.body.resumed).toBe(true);
    const session = t.server.ctx.agent
      .listSessions({ principal: 'x', tenantId: 'default', scopes: new Set(['admin']) } as never)
      .find((s) => s.id === 'r1');
    expect(session?.config.governance.maxToolRounds).toBe(5);
    expect(session?.config.labels.correlationId).toBe('again');
  });

  it('a workspace given as created (relative) resumes after restores too; another directory conflicts', async () => {
    const t = await start({ files: { 'proj/a.txt': 'a\n', 'other/b.txt': 'b\n' } });
    await request(t.url).post('/v1/sessions').send({ sessionId: 'rw', autoSave: true, workspace: 'proj' }).expect(201);
    for (let round = 0; round < 2; round += 1) {
      await request(t.url).delete('/v1/sessions/rw').expect(200);
      const again = await request(t.url)
        .post('/v1/sessions')
        .send({ sessionId: 'rw', resume: true, workspace: 'proj' })
        .expect(201);
      expect(again.body.session.workspace).toBe(join(t.root, 'proj'));
    }
    const moved = await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 'rw', resume: true, workspace: 'other' })
      .expect(400);
    expect(moved.body.error.details).toMatchObject({ field: 'workspace', fields: ['workspace'] });
  });

  it('an option the stored session did not set is applied (live and stored sessions); list entries add, leaving one out conflicts', async () => {
    const t = await start();
    await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 'r2', autoSave: true, inlineSkills: [{ name: 's1', content: 'one' }] })
      .expect(201);
    // Live: the session is rebuilt with the addition.
    await request(t.url)
      .post('/v1/sessions')
      .send({
        sessionId: 'r2',
        resume: true,
        guidelines: 'Answer in haiku.',
        inlineSkills: [
          { name: 's1', content: 'one' },
          { name: 's2', content: 'two' },
        ],
      })
      .expect(201);
    t.fake.script({ text: 'ok' });
    await runAndWait(t, 'r2', 'hi');
    expect(systemPrompt(t.fake.requests[0])).toContain('Answer in haiku.');
    const skills = (await request(t.url).get('/v1/sessions/r2/skills').expect(200)).body.skills as { name: string }[];
    expect(skills.map((s) => s.name).sort()).toEqual(['s1', 's2']);
    const stored = await t.server.ctx.store.load(sessionKey('default', 'r2'));
    expect(stored?.session.options).toMatchObject({ guidelines: 'Answer in haiku.' });
    expect(stored?.session.options.inlineSkills).toHaveLength(2);

    // Stored (closed, then reopened) with an addition: applied too.
    await request(t.url).delete('/v1/sessions/r2').expect(200);
    await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 'r2', resume: true, extra: 'Sign with R2.' })
      .expect(201);
    t.fake.script({ text: 'ok' });
    await runAndWait(t, 'r2', 'hi');
    expect(systemPrompt(t.fake.requests[1])).toContain('Sign with R2.');
    expect(systemPrompt(t.fake.requests[1])).toContain('Answer in haiku.');

    const dropped = await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 'r2', resume: true, inlineSkills: [{ name: 's2', content: 'two' }] })
      .expect(400);
    expect(dropped.body.error.details).toMatchObject({ field: 'inlineSkills', fields: ['inlineSkills'] });
    // The same value as stored is no change.
    await request(t.url)
      .post('/v1/sessions')
      .send({ sessionId: 'r2', resume: true, guidelines: 'Answer in haiku.' })
      .expect(201);
    t.fake.assertDone();
  });

  it("additions are checked with the resuming caller's scopes: a sessions-only caller cannot add network, stdio MCP or auto_approve", async () => {
    const t = await start({ config: { apiTokens: TOKENS } });
    await request(t.url).post('/v1/sessions').set(bearer(HOST)).send({ sessionId: 'r3', autoSave: true }).expect(201);
    const refusals: [Record<string, unknown>, string][] = [
      [{ sandboxNetwork: 'allowed' }, 'sandboxNetwork'],
      [
        { mcpServers: [{ name: 'local', transport: { type: 'stdio', command: 'node', args: ['-e', '0'] } }] },
        'mcpServers',
      ],
      [{ confirmationPolicy: { enabled: true, timeoutAction: 'auto_approve' } }, 'confirmationPolicy.timeoutAction'],
      [{ securityProvider: { type: 'none' } }, 'securityProvider.type'],
      [
        { hooks: [{ event: 'pre_tool_use', endpoint: { type: 'webhook', url: 'http://127.0.0.1:9/hook' } }] },
        'hooks.0.endpoint.url',
      ],
    ];
    for (const [added, field] of refusals) {
      const res = await request(t.url)
        .post('/v1/sessions')
        .set(bearer(SESSIONS))
        .send({ sessionId: 'r3', resume: true, ...added });
      expect(res.status, field).toBeGreaterThanOrEqual(400);
      expect(res.status, field).toBeLessThan(500);
      expect(res.body.error.details.field, field).toBe(field);
    }
    // The host_direct caller may add network.
    await request(t.url)
      .post('/v1/sessions')
      .set(bearer(HOST))
      .send({ sessionId: 'r3', resume: true, sandboxNetwork: 'allowed' })
      .expect(201);
    const stored = await t.server.ctx.store.load(sessionKey('tenant-a', 'r3'));
    expect(stored?.session.options.sandboxNetwork).toBe('allowed');
    expect(stored?.session.options.mcpServers).toBeUndefined();
  });

  it("a permission policy a sessions-only caller adds by resuming is bounded by the operator's: it cannot widen it", async () => {
    const t = await start({
      config: { apiTokens: TOKENS, defaultPermissionPolicy: { deny: ['write'], defaultDecision: 'allow' } },
    });
    const wide = { defaultDecision: 'allow', allow: ['write'] };
    for (const [token, id, written] of [
      [SESSIONS, 'r4-tenant', false],
      [HOST, 'r4-host', true],
    ] as const) {
      await request(t.url).post('/v1/sessions').set(bearer(HOST)).send({ sessionId: id, autoSave: true }).expect(201);
      await request(t.url)
        .post('/v1/sessions')
        .set(bearer(token))
        .send({ sessionId: id, resume: true, permissionPolicy: wide })
        .expect(201);
      t.fake.script(
        { toolCalls: [{ id: `w-${id}`, name: 'write', arguments: { file_path: `${id}.txt`, content: 'x' } }] },
        { text: 'Tried.' },
      );
      await request(t.url)
        .post(`/v1/sessions/${id}/runs`)
        .set(bearer(HOST))
        .send({ input: 'write it', wait: true })
        .expect(200);
      expect(existsSync(join(t.root, `${id}.txt`)), id).toBe(written);
    }
    t.fake.assertDone();
  });
});
