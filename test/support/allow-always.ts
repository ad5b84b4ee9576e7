import request from 'supertest';
import { expect } from 'vitest';

/** Session options under which ls asks a human (the session's own policy, so a token without host_direct may grant it). */
export const ASK_LS = {
  permissionPolicy: { ask: ['ls'], defaultDecision: 'allow' },
  confirmationPolicy: { enabled: true, defaultTimeoutMs: 20_000, timeoutAction: 'reject' },
};

/** Start a run whose ls call asks, answer it "allow always", and wait for the run to complete. */
export async function grantLsAlways(
  url: string,
  sessionId: string,
  headers: Record<string, string> = {},
): Promise<void> {
  const runId = (
    await request(url).post(`/v1/sessions/${sessionId}/runs`).set(headers).send({ input: 'list it' }).expect(202)
  ).body.runId as string;
  let toolId: string | undefined;
  for (let i = 0; i < 500 && toolId === undefined; i += 1) {
    toolId = (
      (await request(url).get(`/v1/sessions/${sessionId}/confirmations`).set(headers).expect(200)).body
        .confirmations as { toolId: string }[]
    )[0]?.toolId;
    if (toolId === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(toolId, 'the ls call asked for a confirmation').toBeDefined();
  const answer = await request(url)
    .post(`/v1/sessions/${sessionId}/confirmations/${toolId}`)
    .set(headers)
    .send({ approved: true, always: true })
    .expect(200);
  expect(answer.body).toMatchObject({ approved: true, always: true });
  for (let i = 0; i < 500; i += 1) {
    const run = (await request(url).get(`/v1/sessions/${sessionId}/runs/${runId}`).set(headers).expect(200)).body
      .run as { status: string };
    if (run.status === 'completed') return;
    expect(run.status).not.toMatch(/failed|cancelled/);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the granted run did not complete');
}
