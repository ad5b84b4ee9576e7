import type { ProgramLimits } from '../../protocol/program-limits.js';

/** What the host hands the sandbox worker when it starts it. */
export interface SandboxWorkerData {
  /** Absolute path of the quickjs-emscripten CommonJS entry (the worker has no module resolution of its own). */
  readonly quickjsEntry: string;
  /** The JavaScript prelude evaluated first in the VM (see sandbox-prelude.ts). */
  readonly prelude: string;
  readonly source: string;
  readonly inputsJson: string;
  readonly limits: ProgramLimits;
  /** Bound of one tool call's JSON arguments, in UTF-16 units. */
  readonly maxArgsChars: number;
  /** Initial size of the wasm memory (the build's INITIAL_MEMORY). */
  readonly wasmInitialBytes: number;
  /** Wasm memory beyond `limits.memoryBytes`: static data, the C stack and allocator slack. */
  readonly wasmOverheadBytes: number;
}

/** How a program ended, as the worker sees it (the host maps kinds to limit errors). */
export type SandboxResult =
  | { readonly ok: true; readonly json: string }
  | { readonly ok: false; readonly kind: 'script' | 'timeout' | 'stalled' | 'output'; readonly error: string };

/** Messages from the sandbox worker to the host. */
export type WorkerToHost =
  /** The VM is set up; the script starts now (the host arms the deadline). */
  | { readonly type: 'started' }
  /** One console line, sent only while the worker's log budget lasts. */
  | { readonly type: 'log'; readonly text: string }
  /** A tool call from the script: `tool` resolves with the result JSON, `readFile` with the file text. */
  | {
      readonly type: 'call';
      readonly id: number;
      readonly method: 'tool' | 'readFile';
      readonly name: string;
      readonly argsJson: string;
    }
  /** The program ended; `disposeError` reports a handle leak found when the runtime was freed. */
  | {
      readonly type: 'done';
      readonly result: SandboxResult;
      readonly droppedLogBytes: number;
      readonly disposeError?: string;
    }
  /** The sandbox itself broke (for example the native stack ran out); the worker must be thrown away. */
  | { readonly type: 'fault'; readonly message: string };

/** Messages from the host to the sandbox worker: the answer to one call. */
export type HostToWorker =
  | { readonly type: 'result'; readonly id: number; readonly ok: true; readonly value: string }
  | { readonly type: 'result'; readonly id: number; readonly ok: false; readonly error: string };
