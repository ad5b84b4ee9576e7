import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { ProgramLimits } from '../../protocol/program-limits.js';
import { ProgramLog } from './program-log.js';
import { ProgramToolGate } from './program-tool-gate.js';
import {
  MIN_PROGRAM_LOG_BYTES,
  PROGRAM_LIMIT_BOUNDS,
  type ProgramFailure,
  type ProgramOutcome,
  type ProgramToolResult,
  type RunProgramOptions,
} from './program-types.js';
import { readFileViaTool, readResultText } from './read-file-via-tool.js';
import { SANDBOX_PRELUDE } from './sandbox-prelude.js';
import type { HostToWorker, SandboxResult, SandboxWorkerData, WorkerToHost } from './sandbox-protocol.js';
import { sandboxWorkerMain } from './sandbox-worker-main.js';

/** How long the sandbox worker may take to start before the program fails. */
export const SANDBOX_STARTUP_TIMEOUT_MS = 10_000;
/** Bound of one tool call's JSON arguments, in characters. */
export const MAX_PROGRAM_TOOL_ARGS_CHARS = 1024 * 1024;

// Why a worker: QuickJS's interrupt handler only runs between bytecodes, so a catastrophic regex or a
// huge native sort would block the event loop, and deeply nested input can exhaust the native stack
// mid-C-call. A worker thread can always be terminated and thrown away; the server thread never is.
const WORKER_SOURCE = `(${sandboxWorkerMain.toString()})(require);`;
const QUICKJS_ENTRY = createRequire(import.meta.url).resolve('quickjs-emscripten');
// The worker's own heap holds only messages and log lines; QuickJS's heap is wasm memory, bounded by memoryBytes.
const WORKER_HEAP_MB = 64;
// A generous native stack, so QuickJS's own (smaller) stack limit is what deep recursion normally hits.
const WORKER_STACK_MB = 32;
// The release build's INITIAL_MEMORY, and what its static data and 5 MiB C stack take before any heap.
const WASM_INITIAL_BYTES = 16 * 1024 * 1024;
const WASM_OVERHEAD_BYTES = 8 * 1024 * 1024;
const MAX_ERROR_LINES = 12;
const MAX_ERROR_CHARS = 4000;

function checkLimits(limits: ProgramLimits): ProgramLimits {
  for (const key of Object.keys(PROGRAM_LIMIT_BOUNDS) as (keyof ProgramLimits)[]) {
    const [min, max] = PROGRAM_LIMIT_BOUNDS[key];
    const value = limits[key];
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new RangeError(`limits.${key} must be an integer from ${min} to ${max}, got ${String(value)}`);
    }
  }
  return limits;
}

/** Keep the message and the script's own frames: drop prelude frames and cut long traces. */
function trimError(text: string): string {
  const lines = text
    .replace(/\s+$/, '')
    .split('\n')
    .filter((line) => !line.includes('sandbox-prelude.js'));
  const kept = lines.slice(0, MAX_ERROR_LINES);
  if (lines.length > kept.length) kept.push(`    ... ${lines.length - kept.length} more frames`);
  const joined = kept.join('\n');
  return joined.length > MAX_ERROR_CHARS ? `${joined.slice(0, MAX_ERROR_CHARS)}...` : joined;
}

interface Failure {
  readonly failure: ProgramFailure;
  readonly error: string;
}

function limitFailure(failure: ProgramFailure, limits: ProgramLimits, detail?: string): Failure {
  const head =
    failure === 'memory'
      ? `program exceeded limits.memoryBytes (${limits.memoryBytes} bytes)`
      : failure === 'stack'
        ? `program exceeded limits.stackBytes (${limits.stackBytes} bytes); recursion or nesting is too deep`
        : `program exceeded limits.timeoutMs (${limits.timeoutMs} ms)`;
  return { failure, error: detail ? `${head}\n${trimError(detail)}` : head };
}

function scriptFailure(text: string, limits: ProgramLimits): Failure {
  if (text.startsWith('InternalError: out of memory')) return limitFailure('memory', limits, text);
  // The parser reports its own stack exhaustion (deeply nested source) as a SyntaxError.
  if (/^(InternalError|SyntaxError): stack overflow/.test(text)) return limitFailure('stack', limits, text);
  if (text.includes('PTC script exceeded maxToolCalls=')) return { failure: 'tool_calls', error: trimError(text) };
  return { failure: 'script', error: trimError(text) };
}

function sandboxFailure(message: string, limits: ProgramLimits): Failure {
  if (/Maximum call stack size exceeded/i.test(message)) return limitFailure('stack', limits);
  if (/out of memory/i.test(message)) return limitFailure('memory', limits);
  return { failure: 'sandbox', error: `program sandbox failed: ${trimError(message)}` };
}

function resultFailure(result: Extract<SandboxResult, { ok: false }>, limits: ProgramLimits): Failure {
  switch (result.kind) {
    case 'timeout':
      return limitFailure('timeout', limits);
    case 'output':
      return {
        failure: 'output',
        error: `program result is ${result.error} bytes of JSON, over limits.maxOutputBytes (${limits.maxOutputBytes} bytes); return a smaller value`,
      };
    case 'stalled':
      return { failure: 'stalled', error: result.error };
    default:
      return scriptFailure(result.error, limits);
  }
}

/** What a tool call resolves with inside the VM: the seed's `{name, output, text, exitCode, metadata}`. */
function toolResultJson(name: string, args: unknown, result: ProgramToolResult): string {
  const base = {
    name: result.name ?? name,
    output: result.output,
    text: name === 'read' ? readResultText(result, args) : null,
    exitCode: result.exitCode,
  };
  try {
    return JSON.stringify({ ...base, metadata: result.metadata ?? null });
  } catch {
    return JSON.stringify({ ...base, metadata: null });
  }
}

/**
 * The seed's entry point rewrite: `export default async function run` (or `export default function run`)
 * becomes a plain declaration, since the script is evaluated as a classic script, not a module.
 */
export function withHostEntryPoint(source: string): string {
  if (source.includes('export default async function run'))
    return source.replace('export default async function run', 'async function run');
  if (source.includes('export default function run'))
    return source.replace('export default function run', 'function run');
  return source;
}

/**
 * Run one script in a fresh QuickJS VM (inside a disposable worker thread) under `limits`. The script
 * defines `run(ctx, inputs)`; its tool calls go through `callTool` after the host has checked them.
 * Never throws for anything the script does: failures come back as `ok: false` with a message.
 */
export async function runProgram(options: RunProgramOptions): Promise<ProgramOutcome> {
  const requested = checkLimits(options.limits);
  // The console log and the JSON result keep at least MIN_PROGRAM_LOG_BYTES, however small the per-call cut.
  const limits: ProgramLimits = {
    ...requested,
    maxOutputBytes: Math.max(MIN_PROGRAM_LOG_BYTES, requested.maxOutputBytes),
  };
  const now = options.now ?? Date.now;
  const log = new ProgramLog(limits.maxOutputBytes);
  const ended = new AbortController();
  const gate = new ProgramToolGate({
    allowedTools: options.allowedTools,
    maxToolCalls: limits.maxToolCalls,
    maxOutputBytes: requested.maxOutputBytes,
    callTool: options.callTool,
    signal: ended.signal,
    now,
  });
  const outcome = (end: { ok: true; result: unknown } | Failure): ProgramOutcome => {
    ended.abort();
    const base = { logs: log.text(), toolCalls: gate.snapshot() };
    return 'failure' in end
      ? { ok: false, error: end.error, failure: end.failure, ...base }
      : { ok: true, result: end.result, ...base };
  };

  if (options.signal.aborted)
    return outcome({ failure: 'cancelled', error: 'program was cancelled before it started' });
  let inputsJson: string;
  try {
    inputsJson = JSON.stringify(options.inputs ?? null) ?? 'null';
  } catch (error) {
    return outcome({
      failure: 'script',
      error: `inputs cannot be converted to JSON: ${error instanceof Error ? error.message : String(error)}`,
    });
  }

  const workerData: SandboxWorkerData = {
    quickjsEntry: QUICKJS_ENTRY,
    prelude: SANDBOX_PRELUDE,
    source: withHostEntryPoint(options.source),
    inputsJson,
    limits,
    maxArgsChars: MAX_PROGRAM_TOOL_ARGS_CHARS,
    wasmInitialBytes: WASM_INITIAL_BYTES,
    wasmOverheadBytes: WASM_OVERHEAD_BYTES,
  };
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData,
    env: {},
    execArgv: [],
    stdout: true,
    stderr: true,
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, stackSizeMb: WORKER_STACK_MB },
  });
  // Whatever the sandbox prints (emscripten writes aborts to stderr) must not reach the server's output.
  worker.stdout.resume();
  worker.stderr.resume();

  return new Promise<ProgramOutcome>((resolve) => {
    let settled = false;
    let deadlineTimer: NodeJS.Timeout | undefined;
    const startupTimer = setTimeout(
      () =>
        settle({ failure: 'sandbox', error: `program sandbox did not start within ${SANDBOX_STARTUP_TIMEOUT_MS} ms` }),
      SANDBOX_STARTUP_TIMEOUT_MS,
    );
    const onAbort = (): void => settle({ failure: 'cancelled', error: 'program was cancelled' });

    function settle(end: { ok: true; result: unknown } | Failure): void {
      if (settled) return;
      settled = true;
      clearTimeout(startupTimer);
      clearTimeout(deadlineTimer);
      options.signal.removeEventListener('abort', onAbort);
      void worker.terminate().catch(() => undefined);
      resolve(outcome(end));
    }

    const reply = (message: HostToWorker): void => {
      if (!settled) worker.postMessage(message);
    };

    const handleCall = async (message: Extract<WorkerToHost, { type: 'call' }>): Promise<void> => {
      try {
        const args: unknown = JSON.parse(message.argsJson);
        if (message.method === 'readFile') {
          const { path, options: readOptions } = args as { path: string; options: Record<string, unknown> | null };
          const text = await readFileViaTool(
            (name, callArgs) => gate.call(name, callArgs),
            path,
            readOptions ?? undefined,
          );
          reply({ type: 'result', id: message.id, ok: true, value: text });
        } else {
          reply({
            type: 'result',
            id: message.id,
            ok: true,
            value: toolResultJson(message.name, args, await gate.call(message.name, args)),
          });
        }
      } catch (error) {
        reply({
          type: 'result',
          id: message.id,
          ok: false,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    };

    const onDone = (message: Extract<WorkerToHost, { type: 'done' }>): void => {
      log.dropped(message.droppedLogBytes);
      if (message.disposeError) {
        settle({ failure: 'sandbox', error: `program sandbox failed to release the VM: ${message.disposeError}` });
      } else if (message.result.ok) {
        try {
          settle({ ok: true, result: JSON.parse(message.result.json) as unknown });
        } catch (error) {
          settle({
            failure: 'output',
            error: `program result is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
          });
        }
      } else {
        settle(resultFailure(message.result, limits));
      }
    };

    worker.on('message', (message: WorkerToHost) => {
      if (settled) return;
      switch (message.type) {
        case 'started':
          clearTimeout(startupTimer);
          deadlineTimer = setTimeout(() => settle(limitFailure('timeout', limits)), limits.timeoutMs);
          break;
        case 'log':
          log.append(message.text);
          break;
        case 'call':
          void handleCall(message);
          break;
        case 'done':
          onDone(message);
          break;
        case 'fault':
          settle(sandboxFailure(message.message, limits));
          break;
      }
    });
    worker.on('error', (error: Error & { code?: string }) => {
      if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') settle(limitFailure('memory', limits));
      else settle(sandboxFailure(error.message, limits));
    });
    worker.on('exit', (code) =>
      settle({ failure: 'sandbox', error: `program sandbox exited unexpectedly (exit code ${code})` }),
    );
    options.signal.addEventListener('abort', onAbort, { once: true });
  });
}
