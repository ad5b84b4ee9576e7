import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ASK_LS, grantLsAlways } from '../support/allow-always.js';
import { useTestServers } from '../support/run-helpers.js';
import { tempDir, writeFiles } from '../support/test-server.js';

const A = 'grants-tenant-a-token-0123456789';
const B = 'grants-tenant-b-token-0123456789';
const asA = { authorization: `Bearer ${A}` };
const asB = { authorization: `Bearer ${B}` };

// An "allow always" grant now lives in the snapshot: it must stay the granting tenant's, however the other
// tenant names its session, and a tenant cannot write grants in by itself.
describe('"allow always" grants in the snapshot stay with the tenant that gave them', () => {
  const start = useTestServers();

  it('the same session id in another tenant asks again, across a restart; grants cannot be sent as options', async () => {
    const dataDir = tempDir('a3s-data-');
    const root = tempDir('a3s-ws-');
    writeFiles(root, { 'tenant-a/a.txt': 'alpha\n', 'tenant-b/b.txt': 'beta\n' });
    const apiTokens = [
      { token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] },
      { token: B, principal: 'bob', tenantId: 'tenant-b', scopes: ['sessions'] },
    ];
    const first = await start({ dataDir, root, config: { apiTokens } });
    await request(first.url)
      .post('/v1/sessions')
      .set(asA)
      .send({ sessionId: 'ci', autoSave: true, ...ASK_LS })
      .expect(201);
    await request(first.url)
      .post('/v1/sessions')
      .set(asB)
      .send({ sessionId: 'ci', autoSave: true, ...ASK_LS })
      .expect(201);
    first.fake.script({ toolCalls: [{ id: 'ls_a', name: 'ls', arguments: {} }] }, { text: 'listed' });
    await grantLsAlways(first.url, 'ci', asA);
    // A tenant cannot plant grants through the options it sends, at creation or on resume.
    const planted = await request(first.url)
      .post('/v1/sessions')
      .set(asB)
      .send({ sessionId: 'other', permissionGrants: [{ tool: 'ls' }] })
      .expect(400);
    expect(JSON.stringify(planted.body.error)).toContain('permissionGrants');
    await first.close();

    const second = await start({ dataDir, root, config: { apiTokens } });
    // Tenant B's "ci" was never granted: its ls asks, and the run waits for an answer.
    second.fake.script({ toolCalls: [{ id: 'ls_b', name: 'ls', arguments: {} }] }, { text: 'b listed' });
    const runB = (await request(second.url).post('/v1/sessions/ci/runs').set(asB).send({ input: 'list' }).expect(202))
      .body.runId as string;
    let pending: { toolId: string }[] = [];
    for (let i = 0; i < 300 && pending.length === 0; i++) {
      pending = (await request(second.url).get('/v1/sessions/ci/confirmations').set(asB).expect(200)).body
        .confirmations;
      if (pending.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(pending.map((p) => p.toolId)).toEqual(['ls_b']);
    await request(second.url)
      .post('/v1/sessions/ci/confirmations/ls_b')
      .set(asB)
      .send({ approved: false, reason: 'no' })
      .expect(200);
    for (let i = 0; i < 300; i++) {
      const run = (await request(second.url).get(`/v1/sessions/ci/runs/${runB}`).set(asB).expect(200)).body.run as {
        status: string;
      };
      if (run.status === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Tenant A's "ci" keeps its grant: its ls passes without asking.
    second.fake.script({ toolCalls: [{ id: 'ls_a2', name: 'ls', arguments: {} }] }, { text: 'a listed again' });
    const runA = await request(second.url)
      .post('/v1/sessions/ci/runs')
      .set(asA)
      .send({ input: 'list again', wait: true })
      .expect(200);
    expect(runA.body.result.text).toBe('a listed again');
    expect(
      (await request(second.url).get('/v1/sessions/ci/confirmations').set(asA).expect(200)).body.confirmations,
    ).toEqual([]);
  });
});
