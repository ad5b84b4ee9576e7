import { randomBytes } from 'node:crypto';
import type { BenchArgs } from './bench-args.js';
import { numberFlag } from './bench-args.js';
import { obtainGc } from './bench-gc.js';
import { BENCH_FILE, startBenchServer } from './bench-server.js';
import { percentile, round } from './bench-stats.js';
import { startDriver } from './driver-client.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** `bytes` bytes that the server takes for a PNG (its magic bytes, then noise that base64 cannot shrink). */
function pngOf(bytes: number): Buffer {
  return Buffer.concat([PNG_SIGNATURE, randomBytes(Math.max(0, bytes - PNG_SIGNATURE.length))]);
}

/** Heap and off-heap (Buffers, ArrayBuffers) bytes of this process. */
function heldBytes(): number {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

/** Every `everyMs` a full gc, then heldBytes: the most seen is the peak of what is live (garbage not counted). */
function liveSampler(collect: () => void, everyMs: number): { stop(): number } {
  let peak = 0;
  const timer = setInterval(() => {
    collect();
    peak = Math.max(peak, heldBytes());
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

interface Sample {
  uploadCpuMs: number;
  runCpuMs: number;
  runMs: number;
  providerCalls: number;
  minInputBytes: number;
  /** Only when sampled (a paced provider, a gc every few ms): the most live over the level before the run. */
  livePeakOverBaseline: number;
  retained: number;
}

/**
 * `attachments`: one run with a large image (default 5 MiB) uploaded first (raw body), on the file store so the
 * bytes live on disk between requests. Each run is a read tool round and an answer, so the image goes to the
 * provider twice. Measures the upload's and the run's server CPU, the peak of heap plus off-heap memory during
 * the run over the level before it (in image sizes: how many copies of the image the process held at once), and
 * what a run leaves behind after a full gc. The provider is in the driver process; the server is in this one, so
 * CPU figures include this process's HTTP client (small next to the image's encoding).
 */
export async function runAttachmentsBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const runs = Math.max(1, Math.round(numberFlag(args, 'runs', 5)));
  const imageBytes = Math.max(64, Math.round(numberFlag(args, 'bytes', 5 * 1024 * 1024)));
  const image = pngOf(imageBytes);
  // The same runs with a 1 KiB image: what a run and its new session keep without the image's size in it.
  const tinyImage = pngOf(1024);
  const base64Bytes = Math.ceil(imageBytes / 3) * 4;
  const gc = obtainGc();
  const driver = await startDriver();
  try {
    const provider = {
      answerChunks: 5,
      chunkText: 'a picture ',
      toolCall: { name: 'read', arguments: { file_path: BENCH_FILE.path } },
    };
    const { baseUrl } = await driver.call('start-provider', provider);
    const bench = await startBenchServer({
      providerBaseUrl: baseUrl,
      storageBackend: 'file',
      models: { 'bench-model': { modalities: { input: ['text', 'image'] } } },
    });
    try {
      const call = async (path: string, init: RequestInit): Promise<Record<string, unknown>> => {
        const res = await fetch(`${bench.url}${path}`, init);
        const json = (await res.json()) as Record<string, unknown>;
        if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
        return json;
      };
      const postJson = (path: string, body: unknown) =>
        call(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const cpuMs = (since: NodeJS.CpuUsage) => {
        const used = process.cpuUsage(since);
        return (used.user + used.system) / 1000;
      };

      const once = async (sampled: boolean, body: Buffer = image): Promise<Sample> => {
        const session = ((await postJson('/v1/sessions', {})) as { session: { id: string } }).session.id;
        gc.collect();
        const before = heldBytes();
        const uploadStart = process.cpuUsage();
        const ref = (await call(`/v1/sessions/${session}/attachments`, {
          method: 'POST',
          headers: { 'content-type': 'image/png' },
          body,
        })) as { attachmentId: string };
        const uploadCpuMs = cpuMs(uploadStart);
        gc.collect();
        const baseline = heldBytes();
        const sampler = sampled ? liveSampler(gc.collect, 20) : undefined;
        const runStart = process.cpuUsage();
        const t0 = performance.now();
        const done = (await postJson(`/v1/sessions/${session}/runs`, {
          input: 'What is in the picture?',
          attachments: [{ type: 'image', mediaType: 'image/png', attachmentId: ref.attachmentId }],
          wait: true,
        })) as { runId: string; run: { status: string } };
        const runMs = performance.now() - t0;
        const runCpuMs = cpuMs(runStart);
        const peak = sampler?.stop() ?? 0;
        if (done.run.status !== 'completed') throw new Error(`run ${done.runId} ended ${done.run.status}`);
        gc.collect();
        // Against the level before the upload: the bytes themselves are on disk (file store), the transcript keeps a reference.
        const retained = heldBytes() - before;
        const page = (await call(`/v1/sessions/${session}/runs/${done.runId}/events?after=-1&limit=1000`, {})) as {
          events: { type: string; payload: { snapshot?: { input_bytes?: number } } }[];
        };
        const inputs = page.events
          .filter((e) => e.type === 'model_input_bound')
          .map((e) => e.payload.snapshot?.input_bytes ?? 0);
        return {
          uploadCpuMs,
          runCpuMs,
          runMs,
          providerCalls: inputs.length,
          minInputBytes: Math.min(...inputs),
          livePeakOverBaseline: sampled ? peak - baseline : 0,
          retained,
        };
      };

      await once(false);
      const samples: Sample[] = [];
      // Alternated with the tiny image's runs, so both see the same warm-up and the same heap.
      const tiny: Sample[] = [];
      for (let i = 0; i < runs; i++) {
        samples.push(await once(false));
        tiny.push(await once(false, tinyImage));
      }
      // The answer streamed slowly (20 chunks/s): a provider call lasts long enough to sample what is live meanwhile.
      await driver.call('configure-provider', { ...provider, chunksPerSecond: 20 });
      const live: Sample[] = [];
      for (let i = 0; i < runs; i++) live.push(await once(true));
      const p50 = (pick: (s: Sample) => number, digits = 3, from = samples) =>
        round(
          percentile(
            from.map((s) => pick(s)),
            50,
          ),
          digits,
        );
      const calls = samples[0]?.providerCalls ?? 0;
      if ([...samples, ...live].some((s) => s.minInputBytes < base64Bytes))
        throw new Error('a provider request did not carry the image (input_bytes below its base64 size)');
      const peak = p50((s) => s.livePeakOverBaseline, 0, live);
      const retained = p50((s) => s.retained, 0);
      return {
        bench: 'attachments',
        image_bytes: imageBytes,
        image_base64_bytes: base64Bytes,
        runs_measured: samples.length,
        provider_calls_per_run: calls,
        upload_server_cpu_ms_p50: p50((s) => s.uploadCpuMs),
        run_server_cpu_ms_p50: p50((s) => s.runCpuMs),
        run_server_cpu_ms_per_provider_call_p50: round(p50((s) => s.runCpuMs) / Math.max(1, calls), 3),
        run_ms_p50: p50((s) => s.runMs),
        live_peak_during_run_bytes_p50: peak,
        live_peak_in_image_sizes_p50: round(peak / imageBytes, 2),
        retained_after_run_bytes_p50: retained,
        retained_after_run_bytes_max: Math.max(...samples.map((s) => s.retained)),
        retained_after_run_tiny_image_bytes_p50: p50((s) => s.retained, 0, tiny),
        retained_for_the_image_bytes: round(retained - p50((s) => s.retained, 0, tiny), 0),
        gc: gc.source,
        target: {
          retained_for_the_image_bytes: 65_536,
          live_peak_in_image_sizes: 'the image held once per provider call',
        },
        note: 'one run = upload a PNG (raw body) to a new session, then POST runs {attachments: [attachmentId], wait: true}: a read tool round and a 5-chunk answer, so the image is sent to the provider twice; file store; held = heapUsed + external (Buffers); CPU and retained from runs on a fast provider (retained: after a full gc, against the level before the upload, the new session of the run included; retained_for_the_image = that minus the same with a 1 KiB image); live peak from other runs whose answer streams at 20 chunks/s, with a full gc and a sample every 20 ms (what is live, not garbage), against the level after the upload; CPU = this process (server and its HTTP client)',
      };
    } finally {
      await bench.close();
    }
  } finally {
    await driver.close();
  }
}
