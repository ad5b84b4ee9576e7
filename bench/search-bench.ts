import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { numberFlag, type BenchArgs } from './bench-args.js';
import { startBenchServer } from './bench-server.js';
import { percentile, round } from './bench-stats.js';

const WARMUP_CALLS = 5;
const DIRS = 20;
const SUBDIRS = 10;

/** The tool calls measured: grep and glob over the whole tree, in the modes a model uses most. */
const CALLS: Readonly<Record<string, { tool: string; args: Record<string, unknown> }>> = {
  grep_content: { tool: 'grep', args: { pattern: 'needle_1999_11\\b' } },
  grep_files: { tool: 'grep', args: { pattern: 'function', output_mode: 'files_with_matches' } },
  grep_glob_ts: { tool: 'grep', args: { pattern: 'TODO', glob: '*.ts', output_mode: 'count' } },
  glob_all_ts: { tool: 'glob', args: { pattern: '**/*.ts' } },
  glob_sorted: { tool: 'glob', args: { pattern: 'src/**/*', sort: 'path' } },
};

/** A source-like file of about 40 lines. */
function fileContent(index: number): string {
  const lines = [`// file ${index}`, `import { helper } from './helper-${index % 7}.js';`, ''];
  for (let i = 0; i < 12; i++)
    lines.push(
      `export function fn_${index}_${i}(value: number): number {`,
      `  return helper(value) + ${i}; // needle_${index}_${i}`,
      '}',
    );
  if (index % 10 === 0) lines.push('// TODO: revisit');
  return `${lines.join('\n')}\n`;
}

/** `files` files in DIRS × SUBDIRS directories under src/, half .ts and half .md, plus node_modules to skip. */
function seedTree(root: string, files: number): void {
  for (let i = 0; i < files; i++) {
    const dir = join(root, 'src', `pkg${i % DIRS}`, `mod${Math.floor(i / DIRS) % SUBDIRS}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `file${i}.${i % 2 === 0 ? 'ts' : 'md'}`), fileContent(i));
  }
  mkdirSync(join(root, 'node_modules', 'dep'), { recursive: true });
  for (let i = 0; i < 100; i++) writeFileSync(join(root, 'node_modules', 'dep', `m${i}.ts`), fileContent(i));
}

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

/**
 * `search`: sequential host-direct grep and glob calls over HTTP on a workspace of `--files` (default 2,000)
 * files; per call kind the p50 latency and the server CPU (user + system of the in-process server, the
 * HTTP client's share included, the same for every build) per call.
 */
export async function runSearchBench(args: BenchArgs): Promise<Record<string, unknown>> {
  const calls = Math.round(numberFlag(args, 'calls', 40));
  const files = Math.round(numberFlag(args, 'files', 2000));
  const bench = await startBenchServer({ providerBaseUrl: 'http://127.0.0.1:9/v1' });
  try {
    seedTree(bench.root, files);
    const id = ((await post(`${bench.url}/v1/sessions`, {})).session as { id: string }).id;
    const figures: Record<string, unknown> = {};
    for (const [name, { tool, args: toolArgs }] of Object.entries(CALLS)) {
      const call = async (): Promise<string> => {
        const result = await post(`${bench.url}/v1/sessions/${id}/tools/${tool}`, { args: toolArgs });
        if (result.exitCode !== 0) throw new Error(`${name} failed: ${JSON.stringify(result).slice(0, 300)}`);
        return String(result.output);
      };
      let output = '';
      for (let i = 0; i < WARMUP_CALLS; i++) output = await call();
      const times: number[] = [];
      const cpu = process.cpuUsage();
      for (let i = 0; i < calls; i++) {
        const started = performance.now();
        await call();
        times.push(performance.now() - started);
      }
      const used = process.cpuUsage(cpu);
      figures[name] = {
        ms_p50: round(percentile(times, 50), 3),
        ms_p99: round(percentile(times, 99), 3),
        server_cpu_ms_per_call: round((used.user + used.system) / 1000 / calls, 3),
        output_lines: output.split('\n').length,
      };
    }
    return {
      bench: 'search',
      files,
      calls_per_kind: calls,
      ...figures,
      note: `per kind ${WARMUP_CALLS} warm-up calls, then ${calls} sequential POST /v1/sessions/:id/tools/{grep,glob} calls; ${files} files in ${DIRS * SUBDIRS} directories under src/ (plus 100 in node_modules, skipped); server_cpu_ms_per_call = process CPU (user + system) over the timed calls / calls (server and HTTP client share the process)`,
    };
  } finally {
    await bench.close();
  }
}
