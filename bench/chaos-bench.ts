import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRedisServer } from '../test/support/redis-server.js';
import { numberFlag, type BenchArgs } from './bench-args.js';
import { percentile, round } from './bench-stats.js';
import { followEvents, type EventFollower } from './event-follower.js';
import { startServerProcess, type ServerProcess } from './server-process.js';

/** Delay of every provider answer, so a run's rounds take long enough to be killed between. */
const PROVIDER_DELAY_MS = 120;
const LEASE_TTL_MS = 1200;
const RESUME_DEADLINE_MS = 20_000;

/** What one chaos run saw. */
interface ChaosRun {
  run: number;
  killedAfterCheckpointTurn: number;
  resumed: boolean;
  resumeAttempts: number;
  killToFirstEventMs: number | null;
  markers: Record<number, number>;
  rerunBeforeCheckpoint: number;
  rerunAfterCheckpoint: number;
  missingRounds: number;
  lost: number;
  duplicated: number;
  completed: boolean;
  error?: string;
}

/**
 * `chaos`: a throwaway redis-server and two built server processes (A and B) on it. Each of `--runs N`
 * runs does `--rounds R` bash tool rounds on A (each appends a marker line to a file); A is SIGKILLed at a
 * random point after a random checkpoint_saved (seen on a WebSocket subscribed through B), the run is resumed
 * on B over HTTP, and the WebSocket on B follows it to the end. Counts rounds re-run at or before the
 * checkpoint (markers), events lost or duplicated on the socket (session_sequence continuity), and the
 * time from the kill to the resumed run's first event. A fresh A is started for every run.
 */
export async function runChaosBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const runs = Math.floor(numberFlag(args, 'runs', 10));
  const rounds = Math.max(2, Math.floor(numberFlag(args, 'rounds', 4)));
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-chaos-ws-')));
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-chaos-')));
  const configFile = join(dir, 'chaos-config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      cluster: { leaseTtlMs: LEASE_TTL_MS, nodeTtlMs: LEASE_TTL_MS },
      defaultPermissionPolicy: { enabled: false },
    }),
  );
  const redis = await startRedisServer();
  const provider = await startChaosProvider(rounds);
  const env = {
    OPENAI_API_KEY: 'sk-chaos',
    OPENAI_BASE_URL: provider.baseUrl,
    A3S_MODEL: 'openai/chaos-model',
    A3S_WORKSPACE_ROOTS: root,
    REDIS_URL: redis.url,
    A3S_CLUSTER_SECRET: 'bench-cluster-secret-0123456789abcdef',
    A3S_REDIS_KEY_PREFIX: `a3s-chaos-${process.pid}:`,
    A3S_CONFIG: configFile,
  };
  const results: ChaosRun[] = [];
  let b: ServerProcess | undefined;
  let a: ServerProcess | undefined;
  try {
    b = await startServerProcess({ ...env, A3S_DATA_DIR: join(dir, 'b'), A3S_NODE_ID: 'node-b' });
    for (let run = 1; run <= runs; run += 1) {
      a = await startServerProcess({ ...env, A3S_DATA_DIR: join(dir, `a${run}`), A3S_NODE_ID: `node-a${run}` });
      results.push(await chaosRun(run, rounds, a, b, root));
      await a.kill();
      a = undefined;
      if (b.exitStatus() !== undefined) throw new Error(`node B exited (${b.exitStatus() ?? ''}):\n${b.output()}`);
    }
  } finally {
    await a?.kill();
    await b?.stop();
    await provider.close();
    await redis.stop();
    rmSync(root, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
  const latencies = results.flatMap((r) => (r.killToFirstEventMs === null ? [] : [r.killToFirstEventMs]));
  const sum = (
    key: 'rerunBeforeCheckpoint' | 'rerunAfterCheckpoint' | 'lost' | 'duplicated' | 'missingRounds',
  ): number => results.reduce((total, r) => total + r[key], 0);
  const resumed = results.filter((r) => r.resumed).length;
  const targets = {
    all_resumed: resumed === runs && results.every((r) => r.completed),
    zero_rounds_rerun_before_checkpoint: sum('rerunBeforeCheckpoint') === 0,
    zero_events_lost_or_duplicated: sum('lost') + sum('duplicated') === 0,
  };
  return {
    bench: 'chaos',
    ok: Object.values(targets).every(Boolean),
    targets,
    runs,
    rounds_per_run: rounds,
    runs_resumed: resumed,
    runs_completed: results.filter((r) => r.completed).length,
    rounds_rerun_before_checkpoint: sum('rerunBeforeCheckpoint'),
    rounds_rerun_after_checkpoint: sum('rerunAfterCheckpoint'),
    rounds_missing: sum('missingRounds'),
    events_lost: sum('lost'),
    events_duplicated: sum('duplicated'),
    kill_to_first_event_ms: {
      p50: round(percentile(latencies, 50)),
      p99: round(percentile(latencies, 99)),
      min: round(Math.min(...latencies)),
      max: round(Math.max(...latencies)),
    },
    per_run: results.map((r) => ({
      run: r.run,
      killed_after_turn: r.killedAfterCheckpointTurn,
      resume_attempts: r.resumeAttempts,
      kill_to_first_event_ms: r.killToFirstEventMs === null ? null : round(r.killToFirstEventMs),
      markers: r.markers,
      ...(r.error !== undefined ? { error: r.error.slice(0, 300) } : {}),
    })),
    note: `each run: session {autoSave: true} created on A, WebSocket on B (after=0), run of ${rounds} bash rounds (each appends "<run> round <n>" to a marker file; provider answers after ${PROVIDER_DELAY_MS} ms) started on A; after checkpoint_saved turn k (k random in 1..${rounds - 1}) and a random 0-${PROVIDER_DELAY_MS} ms more, SIGKILL A; POST .../resume on B retried every 50 ms until accepted (lease TTL ${LEASE_TTL_MS} ms); rerun_before_checkpoint = marker lines beyond one for rounds <= k (target 0); rerun_after_checkpoint = rounds > k that ran twice (allowed: at-least-once after the last checkpoint); lost/duplicated = gaps/repeats of session_sequence on the B socket; kill_to_first_event = SIGKILL to the first event of the resumed run on that socket`,
  };
}

async function chaosRun(
  run: number,
  rounds: number,
  a: ServerProcess,
  b: ServerProcess,
  root: string,
): Promise<ChaosRun> {
  const sessionId = `chaos-${run}`;
  const markerFile = join(root, `markers-${run}.txt`);
  const killTurn = 1 + Math.floor(Math.random() * (rounds - 1));
  const result: ChaosRun = {
    run,
    killedAfterCheckpointTurn: killTurn,
    resumed: false,
    resumeAttempts: 0,
    killToFirstEventMs: null,
    markers: {},
    rerunBeforeCheckpoint: 0,
    rerunAfterCheckpoint: 0,
    missingRounds: 0,
    lost: 0,
    duplicated: 0,
    completed: false,
  };
  let follower: EventFollower | undefined;
  try {
    await postJson(a.url, '/v1/sessions', { sessionId, autoSave: true }, [201]);
    follower = await followEvents(b.url, sessionId, { after: 0 });
    const started = (await postJson(
      a.url,
      `/v1/sessions/${sessionId}/runs`,
      { input: `${sessionId}: append the markers` },
      [202],
    )) as { runId: string };
    const checkpoint = await follower.waitFor(
      (e) => e.type === 'checkpoint_saved' && e.runId === started.runId && Number(e.payload.turn) >= killTurn,
      30_000,
    );
    result.killedAfterCheckpointTurn = Number(checkpoint.payload.turn);
    await sleep(Math.random() * PROVIDER_DELAY_MS);
    const killedAt = performance.now();
    await a.kill();
    // The last checkpoint the socket saw before the kill is what resume may rely on at least.
    const seenTurns = follower.events
      .filter((e) => e.type === 'checkpoint_saved' && e.runId === started.runId && e.receivedAt <= killedAt)
      .map((e) => Number(e.payload.turn));
    const lastCheckpoint = Math.max(result.killedAfterCheckpointTurn, ...seenTurns);
    result.killedAfterCheckpointTurn = lastCheckpoint;
    let resumedRunId: string | undefined;
    const deadline = killedAt + RESUME_DEADLINE_MS;
    while (resumedRunId === undefined && performance.now() < deadline) {
      result.resumeAttempts += 1;
      const response = await fetch(`${b.url}/v1/sessions/${sessionId}/runs/${started.runId}/resume`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      const body = (await response.json()) as { runId?: string };
      if (response.status === 202 && typeof body.runId === 'string') resumedRunId = body.runId;
      else await sleep(50);
    }
    if (resumedRunId === undefined) throw new Error(`resume on B not accepted within ${RESUME_DEADLINE_MS} ms`);
    result.resumed = true;
    const newRun = resumedRunId;
    const first = await follower.waitFor((e) => e.runId === newRun, 20_000);
    result.killToFirstEventMs = first.receivedAt - killedAt;
    const end = await follower.waitFor((e) => e.type === 'agent_end' && e.runId === newRun, 30_000);
    result.completed = end.payload.status === undefined || end.payload.status === 'completed';
    // Let trailing events of the run arrive before the continuity check.
    await sleep(200);
    const sequences = follower.events.map((e) => e.sessionSequence);
    const seen = new Set<number>();
    for (const sequence of sequences) {
      if (seen.has(sequence)) result.duplicated += 1;
      seen.add(sequence);
    }
    const max = Math.max(...sequences);
    for (let s = 1; s <= max; s += 1) if (!seen.has(s)) result.lost += 1;
    const lines = existsSync(markerFile)
      ? readFileSync(markerFile, 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
      : [];
    for (let round = 1; round <= rounds; round += 1) {
      const count = lines.filter((l) => l.trim() === `${sessionId} round ${round}`).length;
      result.markers[round] = count;
      if (count === 0) result.missingRounds += 1;
      if (count > 1 && round <= lastCheckpoint) result.rerunBeforeCheckpoint += count - 1;
      if (count > 1 && round > lastCheckpoint) result.rerunAfterCheckpoint += count - 1;
    }
  } catch (error) {
    result.error = error instanceof Error ? error.message : String(error);
  } finally {
    await follower?.close();
  }
  return result;
}

async function postJson(url: string, path: string, body: unknown, expect: number[]): Promise<unknown> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const parsed = (await response.json()) as unknown;
  if (!expect.includes(response.status))
    throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(parsed).slice(0, 300)}`);
  return parsed;
}

interface ChatMessage {
  role?: string;
  content?: unknown;
}

/**
 * The chaos model: a request with fewer than `rounds` tool results gets a bash call appending
 * "<session> round <n>" (n = tool results so far + 1) to the run's marker file; then a text answer.
 */
async function startChaosProvider(rounds: number): Promise<{ baseUrl: string; close(): Promise<void> }> {
  let counter = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `chaos provider: no ${req.method} ${req.url}` } }));
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages?: ChatMessage[]; model?: string };
    const messages = body.messages ?? [];
    const tag =
      messages
        .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')))
        .map((text) => /chaos-\d+/.exec(text)?.[0])
        .find((t) => t !== undefined) ?? 'chaos-unknown';
    const done = messages.filter((m) => m.role === 'tool').length;
    await sleep(PROVIDER_DELAY_MS);
    counter += 1;
    const id = `chatcmpl-chaos-${counter}`;
    const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model ?? 'chaos-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(chunk({ role: 'assistant', content: '' }));
    if (done < rounds) {
      const run = tag.replace('chaos-', '');
      const args = JSON.stringify({ command: `echo "${tag} round ${done + 1}" >> markers-${run}.txt` });
      res.write(
        chunk({
          tool_calls: [
            { index: 0, id: `call_${counter}`, type: 'function', function: { name: 'bash', arguments: args } },
          ],
        }),
      );
      res.write(chunk({}, 'tool_calls'));
    } else {
      res.write(chunk({ content: `${tag} finished` }));
      res.write(chunk({}, 'stop'));
    }
    res.end('data: [DONE]\n\n');
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
