import { existsSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeSet } from '../../src/protocol/change-set.js';
import { homeName } from '../../src/runtime/sandbox/sandbox-homes.js';
import { bwrapWorks } from '../sandbox/sandbox-helpers.js';
import type { FakeStep, RecordedRequest } from '../support/fake-provider.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { bash, patchText } from './changes-helpers.js';

const A = 'token-changes-race-a-000000001';
const B = 'token-changes-race-b-000000001';
const TOKENS = [
  { token: A, principal: 'a', tenantId: 'race-a', scopes: ['sessions'] },
  { token: B, principal: 'b', tenantId: 'race-b', scopes: ['sessions'] },
];
const as = (token: string) => (r: request.Test) => r.set('authorization', `Bearer ${token}`);

type Msg = { role: string; content?: unknown };
const messagesOf = (r: RecordedRequest) => r.body.messages as Msg[];
const prompt = (r: RecordedRequest) => String(messagesOf(r).findLast((m) => m.role === 'user')?.content ?? '');
const startOf = (input: string) => (r: RecordedRequest) => prompt(r) === input && messagesOf(r).at(-1)?.role === 'user';
const afterTool = (input: string) => (r: RecordedRequest) =>
  prompt(r) === input && messagesOf(r).at(-1)?.role === 'tool';

/** A run answered by the fake whatever order concurrent runs ask in: one bash call, then a text. */
function steps(input: string, command: string): FakeStep[] {
  return [
    { when: startOf(input), toolCalls: [bash(`c_${input.replace(/\W/g, '_')}`, command)] },
    { when: afterTool(input), text: 'ok' },
  ];
}

async function run(t: TestServer, token: string, id: string, input: string): Promise<string> {
  const res = await as(token)(request(t.url).post(`/v1/sessions/${id}/runs`))
    .send({ input, wait: true })
    .expect(200);
  return res.body.runId as string;
}

async function changes(t: TestServer, token: string, id: string, runId: string): Promise<ChangeSet> {
  return (await as(token)(request(t.url).get(`/v1/sessions/${id}/runs/${runId}/changes`)).expect(200)).body;
}

describe.skipIf(!bwrapWorks())('change capture under attack: concurrency (bwrap)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { apiTokens: TOKENS } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('two tenants with the same session id run at once: their change sets and stores never cross', async () => {
    const sessionId = 'same-session-id';
    for (const token of [A, B]) await as(token)(request(t.url).post('/v1/sessions')).send({ sessionId }).expect(201);
    const rounds = 3;
    const inputs = (tenant: string) => Array.from({ length: rounds }, (_, n) => `${tenant} round ${n}`);
    t.fake.script(
      ...inputs('a').flatMap((input, n) => steps(input, `echo tenant-a-${n} > shared.txt && echo a > only-a.txt`)),
      ...inputs('b').flatMap((input, n) => steps(input, `echo tenant-b-${n} > shared.txt && echo b > only-b.txt`)),
    );
    const runsOf = async (token: string, tenant: string): Promise<string[]> => {
      const ids: string[] = [];
      for (const input of inputs(tenant)) ids.push(await run(t, token, sessionId, input));
      return ids;
    };
    const [ofA, ofB] = await Promise.all([runsOf(A, 'a'), runsOf(B, 'b')]);
    for (const [token, tenant, other, ids] of [
      [A, 'a', 'b', ofA],
      [B, 'b', 'a', ofB],
    ] as const) {
      for (const [n, runId] of ids.entries()) {
        const changeSet = await changes(t, token, sessionId, runId);
        const text = patchText(changeSet);
        expect(text).toContain(`+tenant-${tenant}-${n}`);
        expect(text).not.toContain(`tenant-${other}-`);
        expect(changeSet.files.map((file) => file.path)).not.toContain(`only-${other}.txt`);
        if (n === 0)
          expect(changeSet.files.map((file) => file.path).sort()).toEqual([`only-${tenant}.txt`, 'shared.txt']);
      }
    }
    // The other tenant's run ids are not runs of this tenant's session of the same id.
    const crossed = await as(A)(request(t.url).get(`/v1/sessions/${sessionId}/runs/${ofB[0]}/changes`)).expect(404);
    expect(crossed.body.error.code).toBe('RUN_NOT_FOUND');
    const range = await as(A)(
      request(t.url).get(`/v1/sessions/${sessionId}/changes`).query({ from: ofA[0], to: ofB[2] }),
    ).expect(404);
    expect(range.body.error.code).toBe('RUN_NOT_FOUND');
    for (const tenant of ['race-a', 'race-b'])
      expect(existsSync(join(t.dataDir, 'changes', homeName(tenant, sessionId), 'git', 'HEAD'))).toBe(true);
    expect(homeName('race-a', sessionId)).not.toBe(homeName('race-b', sessionId));
  });

  it('many range requests at once, while a run captures on the same store: every answer whole, the index sound', async () => {
    const id = (await as(A)(request(t.url).post('/v1/sessions')).send({}).expect(201)).body.session.id as string;
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      const input = `range ${n}`;
      t.fake.script(
        ...steps(input, `for i in $(seq 1 40); do echo ${n}-$i > f$i-${n}.txt; done; rm -f f1-${n - 1}.txt`),
      );
      ids.push(await run(t, A, id, input));
    }
    const pairs = [
      [ids[0], ids[0]],
      [ids[0], ids[1]],
      [ids[0], ids[2]],
      [ids[1], ids[2]],
      [ids[2], ids[2]],
    ] as const;
    const rangeOf = async (from: string, to: string) =>
      (await as(A)(request(t.url).get(`/v1/sessions/${id}/changes`).query({ from, to })).expect(200)).body as ChangeSet;
    const expected = new Map<string, ChangeSet>();
    for (const [from, to] of pairs) expected.set(`${from}>${to}`, await rangeOf(from!, to!));
    // A fourth run captures (base and result) while 30 ranges are asked for at once.
    t.fake.script(...steps('range 3', 'for i in $(seq 1 200); do echo x$i > g$i.txt; done'));
    const fourth = run(t, A, id, 'range 3');
    const answers = await Promise.all(
      Array.from({ length: 30 }, async (_, n) => {
        const [from, to] = pairs[n % pairs.length]!;
        return { key: `${from}>${to}`, got: await rangeOf(from!, to!) };
      }),
    );
    for (const { key, got } of answers) {
      const want = expected.get(key)!;
      expect(got.patch_digest).toBe(want.patch_digest);
      expect(got.patch_base64).toBe(want.patch_base64);
      expect(got.files).toEqual(want.files);
    }
    const fourthId = await fourth;
    const last = await changes(t, A, id, fourthId);
    expect(last.files).toHaveLength(200);
    expect(last.files.every((file) => file.status === 'added' && /^g\d+\.txt$/.test(file.path))).toBe(true);
    // The index is sound: a run that changes nothing starts and ends on the fourth's result tree.
    t.fake.script(...steps('range 4', 'true'));
    const idle = await changes(t, A, id, await run(t, A, id, 'range 4'));
    expect(idle.files).toEqual([]);
    expect(idle.base_tree).toBe(last.result_tree);
  });
});
