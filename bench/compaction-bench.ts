import type { ChatMessage } from '../src/protocol/chat-message.js';
import { estimateMessageTokens } from '../src/runtime/compaction/estimate-tokens.js';
import type { BenchArgs } from './bench-args.js';
import { numberFlag } from './bench-args.js';
import { startBenchServer } from './bench-server.js';
import { percentile, round } from './bench-stats.js';
import { startDriver } from './driver-client.js';

const WINDOW_TOKENS = 180_000;

/** About `count` messages (user / assistant with a tool call / tool result turns) of about `tokens` estimated tokens. */
function seededHistory(count: number, tokens: number): ChatMessage[] {
  // Three messages of every four carry filler (the assistant tool call carries none).
  const per = Math.floor((tokens * 4) / ((count * 3) / 4));
  const filler = (i: number) => `${i} ${'lorem ipsum dolor sit amet '.repeat(Math.ceil(per / 27))}`.slice(0, per);
  const messages: ChatMessage[] = [];
  for (let i = 0; messages.length < count; i++) {
    messages.push({ role: 'user', content: filler(i) });
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: `call_${i}`, type: 'function', function: { name: 'read', arguments: '{"file_path":"notes.txt"}' } },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${i}`, content: filler(i) });
    messages.push({ role: 'assistant', content: filler(i) });
  }
  return messages.slice(0, count);
}

interface Measured {
  latencyMs: number;
  serverCpuMs: number;
  events: { type: string; payload: Record<string, unknown> }[];
}

/**
 * `compaction`: a side-question run on a seeded ~2,000-message, ~150k-token history in an autoCompact
 * session (window 180k, threshold 0.8: it crosses) against the same run in a session without
 * autoCompact, then a run on the compacted transcript. The provider (in the driver process) answers at
 * once, so the extra server CPU of the compacting run is the compaction step's own cost.
 */
export async function runCompactionBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const rounds = Math.max(1, Math.round(numberFlag(args, 'rounds', 5)));
  const count = Math.round(numberFlag(args, 'messages', 2000));
  const history = seededHistory(count, numberFlag(args, 'tokens', 150_000));
  const driver = await startDriver();
  try {
    const { baseUrl } = await driver.call('start-provider', { answerChunks: 5, chunkText: 'summary ' });
    const bench = await startBenchServer({ providerBaseUrl: baseUrl, limits: { bodyLimitBytes: 16 * 1024 * 1024 } });
    try {
      const post = async (path: string, body: unknown) => {
        const res = await fetch(`${bench.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const json = (await res.json()) as Record<string, unknown>;
        if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
        return json;
      };
      const session = async (options: Record<string, unknown>) =>
        ((await post('/v1/sessions', options)) as { session: { id: string } }).session.id;
      const compacting = await session({ autoCompact: true, maxContextTokens: WINDOW_TOKENS });
      const plain = await session({ maxContextTokens: WINDOW_TOKENS });
      // A side question (`history`) runs on the given transcript and leaves the session's unchanged, so every round starts over.
      const run = async (id: string, messages: ChatMessage[]): Promise<Measured> => {
        const body = { input: 'What next?', history: messages, wait: true };
        const cpu = process.cpuUsage();
        const t0 = performance.now();
        const done = (await post(`/v1/sessions/${id}/runs`, body)) as { runId: string; run: { status: string } };
        const latencyMs = performance.now() - t0;
        const used = process.cpuUsage(cpu);
        if (done.run.status !== 'completed') throw new Error(`run ${done.runId} ended ${done.run.status}`);
        const page = await fetch(`${bench.url}/v1/sessions/${id}/runs/${done.runId}/events?after=-1&limit=1000`);
        const { events } = (await page.json()) as Measured;
        return { latencyMs, serverCpuMs: (used.user + used.system) / 1000, events };
      };
      await run(plain, history);
      await run(compacting, history);
      const withCompaction: Measured[] = [];
      const without: Measured[] = [];
      for (let i = 0; i < rounds; i++) {
        without.push(await run(plain, history));
        withCompaction.push(await run(compacting, history));
      }
      const event = withCompaction[0]?.events.find((e) => e.type === 'context_compacted');
      if (!event) throw new Error('the compacting run emitted no context_compacted');
      const afterMessages = Number(event.payload.after_messages);
      const compacted: ChatMessage[] = [
        { role: 'user', content: `[Context summary]\n\n${String(event.payload.summary)}` },
        ...history.slice(history.length - (afterMessages - 1)),
      ];
      const after: Measured[] = [];
      for (let i = 0; i < rounds; i++) after.push(await run(compacting, compacted));
      const p50 = (samples: Measured[], key: 'latencyMs' | 'serverCpuMs') =>
        round(
          percentile(
            samples.map((s) => s[key]),
            50,
          ),
          3,
        );
      return {
        bench: 'compaction',
        history_messages: history.length,
        history_estimated_tokens: estimateMessageTokens(history),
        max_context_tokens: WINDOW_TOKENS,
        threshold: 0.8,
        compaction: {
          before_messages: event.payload.before_messages,
          after_messages: afterMessages,
          percent_before: event.payload.percent_before,
        },
        compaction_step_server_cpu_ms_p50: round(p50(withCompaction, 'serverCpuMs') - p50(without, 'serverCpuMs'), 3),
        run_with_compaction: {
          latency_ms_p50: p50(withCompaction, 'latencyMs'),
          server_cpu_ms_p50: p50(withCompaction, 'serverCpuMs'),
        },
        run_without_compaction: {
          latency_ms_p50: p50(without, 'latencyMs'),
          server_cpu_ms_p50: p50(without, 'serverCpuMs'),
        },
        run_after_compaction: {
          messages: compacted.length,
          latency_ms_p50: p50(after, 'latencyMs'),
          server_cpu_ms_p50: p50(after, 'serverCpuMs'),
        },
        rounds,
        note: 'side-question runs (POST .../runs {history, wait: true}) on the seeded history; the provider answers at once from the driver process, so compaction_step_server_cpu_ms_p50 = server CPU of the compacting run minus that of the same run without autoCompact (estimate, split, render, the summary request and its JSON, the event); the client requests are made from the server process and cost the same in both runs',
      };
    } finally {
      await bench.close();
    }
  } finally {
    await driver.close();
  }
}
