import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/**
 * What one session costs this process's heap, after a full gc: an idle one, and one kept with its finished run.
 * The bounds guard the session kernel's shape (parts wired as objects, no per-session hidden classes, collections
 * created on first use): README's `sessions` and `runs` benchmarks report the same figures.
 */
const IDLE_SESSIONS = 2000;
const RUN_SESSIONS = 600;
const WARMUP = 300;
const CONCURRENCY = 10;
const MAX_IDLE_BYTES = 7 * 1024;
const MAX_RETAINED_BYTES = 15 * 1024;

/** A full collection (twice, so what finalizers release goes too): --expose-gc, or the V8 flag set now. */
function fullGc(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  let gc = exposed;
  if (typeof gc !== 'function') {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  return () => {
    gc();
    gc();
  };
}

describe('heap per session', () => {
  let fake: FakeProvider;
  let t: TestServer;
  const gc = fullGc();

  beforeAll(async () => {
    fake = await startFakeProvider({ repeat: { text: 'done', chunks: 4 } });
    t = await startTestServer({ fake, config: { storageBackend: 'memory', limits: { maxSessions: 100_000 } } });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  const post = async (path: string, body: unknown, status: number): Promise<Record<string, unknown>> => {
    const res = await fetch(`${t.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const parsed = (await res.json()) as Record<string, unknown>;
    if (res.status !== status) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(parsed)}`);
    return parsed;
  };
  const createSession = async (): Promise<string> =>
    ((await post('/v1/sessions', {}, 201)).session as { id: string }).id;
  const sessionWithRun = async (): Promise<void> => {
    const id = await createSession();
    const finished = await post(`/v1/sessions/${id}/runs`, { input: 'hello', wait: true }, 200);
    expect((finished.run as { status: string }).status).toBe('completed');
  };
  /** Run `task` `count` times, CONCURRENCY at once. */
  const times = async (count: number, task: () => Promise<unknown>): Promise<void> => {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < count) {
          next += 1;
          await task();
        }
      }),
    );
  };
  /** Heap bytes per session `count` more sessions made by `task` hold. */
  const heapPerSession = async (count: number, task: () => Promise<unknown>): Promise<number> => {
    await times(WARMUP, task);
    await new Promise((resolve) => setTimeout(resolve, 100));
    fake.requests.length = 0;
    gc();
    const live = t.server.ctx.agent.sessionCount;
    const before = process.memoryUsage().heapUsed;
    await times(count, task);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The strict fake keeps every request it answered: what it holds is the test's, not the sessions'.
    fake.requests.length = 0;
    gc();
    const after = process.memoryUsage().heapUsed;
    expect(t.server.ctx.agent.sessionCount - live).toBe(count);
    return (after - before) / count;
  };

  it(`an idle session holds at most ${MAX_IDLE_BYTES} bytes of heap`, async () => {
    const perSession = await heapPerSession(IDLE_SESSIONS, createSession);
    console.log(`heap per idle session: ${Math.round(perSession)} bytes`);
    expect(perSession).toBeGreaterThan(0);
    expect(perSession).toBeLessThanOrEqual(MAX_IDLE_BYTES);
  });

  it(`a session kept with its finished run holds at most ${MAX_RETAINED_BYTES} bytes of heap`, async () => {
    const perSession = await heapPerSession(RUN_SESSIONS, sessionWithRun);
    console.log(`heap per session with its finished run: ${Math.round(perSession)} bytes`);
    expect(perSession).toBeGreaterThan(0);
    expect(perSession).toBeLessThanOrEqual(MAX_RETAINED_BYTES);
  }, 60_000);
});
