import type {
  QuickJSContext,
  QuickJSDeferredPromise,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from 'quickjs-emscripten';
import type { HostToWorker, SandboxResult, SandboxWorkerData, WorkerToHost } from './sandbox-protocol.js';

/**
 * Body of the sandbox worker thread: one QuickJS runtime for one program, driven by host messages.
 * The host starts the worker from this function's source text (`toString()`), so the body must not use
 * anything from outside itself: Node modules and quickjs-emscripten arrive through `nodeRequire`.
 */
export function sandboxWorkerMain(nodeRequire: NodeJS.Require): void {
  const threads = nodeRequire('node:worker_threads') as typeof import('node:worker_threads');
  const port = threads.parentPort;
  if (!port) throw new Error('sandboxWorkerMain must run in a worker thread');
  const data = threads.workerData as SandboxWorkerData;
  const quickjs = nodeRequire(data.quickjsEntry) as typeof import('quickjs-emscripten');
  const post = (message: WorkerToHost): void => port.postMessage(message);

  let runtime: QuickJSRuntime | undefined;
  let vm: QuickJSContext | undefined;
  let mainPromise: QuickJSHandle | undefined;
  const pending = new Map<number, QuickJSDeferredPromise>();
  let nextCallId = 0;
  let finished = false;
  let deadline = Number.POSITIVE_INFINITY;
  let timedOut = false;
  let logBytes = 0;
  let droppedLogBytes = 0;

  const errorText = (error: unknown): string =>
    error instanceof Error ? `${error.name}: ${error.message}` : String(error);

  // Once the sandbox itself has failed, its memory may be inconsistent: report and touch nothing more.
  const fault = (error: unknown): void => {
    if (finished) return;
    finished = true;
    post({ type: 'fault', message: errorText(error) });
  };

  const finish = (result: SandboxResult): void => {
    if (finished) return;
    finished = true;
    let disposeError: string | undefined;
    try {
      for (const deferred of pending.values()) deferred.dispose();
      pending.clear();
      mainPromise?.dispose();
      vm?.dispose();
      runtime?.dispose();
    } catch (error) {
      disposeError = errorText(error);
    }
    const final: SandboxResult = !result.ok && timedOut ? { ok: false, kind: 'timeout', error: result.error } : result;
    post({ type: 'done', result: final, droppedLogBytes, ...(disposeError ? { disposeError } : {}) });
  };

  const readStringProp = (context: QuickJSContext, handle: QuickJSHandle, key: string): string | undefined => {
    const prop = context.getProp(handle, key);
    try {
      return context.typeof(prop) === 'string' ? context.getString(prop) : undefined;
    } finally {
      prop.dispose();
    }
  };

  // Errors that escaped the prelude's own formatting (interrupts, out-of-memory, syntax errors).
  const describeHandle = (context: QuickJSContext, handle: QuickJSHandle): string => {
    try {
      const type = context.typeof(handle);
      if (type === 'string') return `Uncaught ${context.getString(handle)}`;
      if (type !== 'object') return `Uncaught ${type}`;
      const name = readStringProp(context, handle, 'name') ?? 'Error';
      const message = readStringProp(context, handle, 'message') ?? '';
      const stack = readStringProp(context, handle, 'stack');
      return stack ? `${name}: ${message}\n${stack}` : `${name}: ${message}`;
    } catch {
      return 'Uncaught exception (it could not be described)';
    }
  };

  const scriptError = (error: string): SandboxResult => ({ ok: false, kind: 'script', error });

  const decodeEnvelope = (envelope: string): SandboxResult => {
    const body = envelope.slice(1);
    if (envelope.startsWith('R')) {
      const bytes = Buffer.byteLength(body);
      if (bytes > data.limits.maxOutputBytes) return { ok: false, kind: 'output', error: String(bytes) };
      return { ok: true, json: body };
    }
    if (envelope.startsWith('L')) return { ok: false, kind: 'output', error: body };
    return scriptError(body);
  };

  // Run queued promise jobs, then see whether run() has settled or can no longer settle.
  const pump = (): void => {
    if (finished || !vm || !runtime || !mainPromise) return;
    const context = vm;
    const jobs = runtime.executePendingJobs();
    if (jobs.error) {
      const text = describeHandle(context, jobs.error);
      jobs.error.dispose();
      finish(scriptError(text));
      return;
    }
    const state = context.getPromiseState(mainPromise);
    if (state.type === 'pending') {
      // No timers exist in the VM: with no tool call in flight, nothing can ever settle the promise.
      if (pending.size === 0) {
        finish({
          ok: false,
          kind: 'stalled',
          error: 'run() is waiting on a promise that can never settle (no tool call is in flight)',
        });
      }
      return;
    }
    if (state.type === 'fulfilled') {
      if (state.notAPromise) return finish(scriptError('the program did not start as expected'));
      const envelope =
        context.typeof(state.value) === 'string'
          ? context.getString(state.value)
          : 'Erun() did not settle with a result';
      state.value.dispose();
      finish(decodeEnvelope(envelope));
      return;
    }
    const text = describeHandle(context, state.error);
    state.error.dispose();
    finish(scriptError(text));
  };

  const onHostCall = (
    context: QuickJSContext,
    methodHandle: QuickJSHandle,
    nameHandle: QuickJSHandle,
    argsHandle: QuickJSHandle,
  ): QuickJSHandle => {
    const deferred = context.newPromise();
    const method = context.getString(methodHandle) === 'readFile' ? 'readFile' : 'tool';
    const name = context.getString(nameHandle);
    const argsJson = context.getString(argsHandle);
    if (argsJson.length > data.maxArgsChars) {
      const error = context.newError(
        `arguments of tool "${name}" are too large (${argsJson.length} characters; at most ${data.maxArgsChars})`,
      );
      deferred.reject(error);
      error.dispose();
      return deferred.handle;
    }
    nextCallId += 1;
    pending.set(nextCallId, deferred);
    post({ type: 'call', id: nextCallId, method, name, argsJson });
    // Returned to the VM, which takes the promise handle over; the resolvers stay in `pending`.
    return deferred.handle;
  };

  const onHostLog = (context: QuickJSContext, textHandle: QuickJSHandle): void => {
    const text = context.typeof(textHandle) === 'string' ? context.getString(textHandle) : '';
    const bytes = Buffer.byteLength(text) + 1;
    // The host keeps the exact bound; the worker only stops flooding it once the budget is spent.
    if (logBytes < data.limits.maxOutputBytes) {
      logBytes += bytes;
      post({ type: 'log', text });
    } else {
      droppedLogBytes += bytes;
    }
  };

  const onResult = (message: HostToWorker): void => {
    if (finished || !vm) return;
    const context = vm;
    const deferred = pending.get(message.id);
    if (!deferred) return;
    pending.delete(message.id);
    try {
      const value = message.ok ? context.newString(message.value) : context.newError(message.error);
      if (message.ok) deferred.resolve(value);
      else deferred.reject(value);
      value.dispose();
      deferred.dispose();
      pump();
    } catch (error) {
      fault(error);
    }
  };

  const begin = (module: QuickJSWASMModule): void => {
    const rt = module.newRuntime();
    runtime = rt;
    rt.setMemoryLimit(data.limits.memoryBytes);
    rt.setMaxStackSize(data.limits.stackBytes);
    // The host's timer is the hard stop; this ends plain JavaScript loops gracefully at the same deadline.
    rt.setInterruptHandler(() => {
      if (Date.now() <= deadline) return false;
      timedOut = true;
      return true;
    });
    const context = rt.newContext();
    vm = context;

    const factory = context.unwrapResult(
      context.evalCode(data.prelude, 'sandbox-prelude.js', { type: 'global', strict: true }),
    );
    const hostCall = context.newFunction('hostCall', (method, name, args) => onHostCall(context, method, name, args));
    const hostLog = context.newFunction('hostLog', (text) => onHostLog(context, text));
    const maxLogChars = context.newNumber(data.limits.maxOutputBytes);
    const start = context.unwrapResult(
      context.callFunction(factory, context.undefined, hostCall, hostLog, maxLogChars),
    );
    for (const handle of [factory, hostCall, hostLog, maxLogChars]) handle.dispose();

    deadline = Date.now() + data.limits.timeoutMs;
    post({ type: 'started' });
    const evaluated = context.evalCode(data.source, 'program.js', { type: 'global' });
    if (evaluated.error) {
      const text = describeHandle(context, evaluated.error);
      evaluated.error.dispose();
      start.dispose();
      finish(scriptError(text));
      return;
    }
    evaluated.value.dispose();

    const inputs = context.newString(data.inputsJson);
    const maxResultChars = context.newNumber(data.limits.maxOutputBytes);
    const called = context.callFunction(start, context.undefined, inputs, maxResultChars);
    for (const handle of [start, inputs, maxResultChars]) handle.dispose();
    if (called.error) {
      const text = describeHandle(context, called.error);
      called.error.dispose();
      finish(scriptError(text));
      return;
    }
    mainPromise = called.value;
    pump();
  };

  port.on('message', (message: HostToWorker) => onResult(message));
  // QuickJS's own heap accounting misses some allocations under emscripten (array storage), so the
  // wasm memory itself is capped too: past it, malloc fails and QuickJS throws "out of memory".
  // The module's memory import requires at least the build's initial size.
  const initialPages = data.wasmInitialBytes / 65536;
  const pages = Math.max(initialPages, Math.ceil((data.limits.memoryBytes + data.wasmOverheadBytes) / 65536));
  // The project's lib settings declare WebAssembly's types but not its global value.
  const wasm = (
    globalThis as unknown as { WebAssembly: { Memory: new (size: { initial: number; maximum: number }) => object } }
  ).WebAssembly;
  const wasmMemory = new wasm.Memory({ initial: initialPages, maximum: pages });
  quickjs.newQuickJSWASMModuleFromVariant(quickjs.newVariant(quickjs.RELEASE_SYNC, { wasmMemory })).then(
    (module) => {
      try {
        begin(module);
      } catch (error) {
        fault(error);
      }
    },
    (error: unknown) => fault(error),
  );
}
