import { batchTool } from '../../src/runtime/tools/builtin/batch.js';
import type { ToolContext, ToolResult } from '../../src/runtime/tools/define-tool.js';
import { createTestWorkspace, type TestWorkspace } from '../tools/tool-test-context.js';
import {
  createLatch,
  createRecordingInvoker,
  createTestTools,
  realTools,
  type Latch,
  type RecordingInvoker,
} from './recording-invoker.js';

/** One batch item: its entry in the batch metadata's `results` plus the output shown in its block. */
export interface ItemReport {
  index: number;
  id: string | null;
  tool: string;
  step: number;
  success: boolean;
  status: 'ok' | 'error' | 'skipped';
  exit_code: number | null;
  output_bytes: number;
  error_kind: Record<string, unknown> | null;
  metadata: Record<string, unknown> | null;
  truncated: boolean;
  /** The item's block text without the `ERROR: ` prefix of a failed item. */
  output: string;
}

const BLOCK_HEADER = /^--- \[(\d+) \/ step (\d+): ([^\]]+)\] ---$/gm;
const NOTE = /^(The batch was cancelled|\d+ of \d+ invocation\(s\) failed|All \d+ invocation\(s\) failed)/;

/** The body of every `--- [i / step s: ...] ---` block of a batch output, by index (notes at the end removed). */
export function blockBodies(output: string): Map<number, string> {
  const headers = [...output.matchAll(BLOCK_HEADER)];
  const bodies = new Map<number, string>();
  headers.forEach((header, n) => {
    const start = (header.index ?? 0) + header[0].length + 1;
    const end = n + 1 < headers.length ? (headers[n + 1].index ?? output.length) - 2 : output.length;
    let body = output.slice(start, end);
    if (n + 1 === headers.length) {
      const cut = body.lastIndexOf('\n\n');
      if (cut !== -1 && NOTE.test(body.slice(cut + 2))) body = body.slice(0, cut);
    }
    bodies.set(Number(header[1]), body);
  });
  return bodies;
}

/** A temp workspace, a recording invoker over real and test tools, and a way to run a batch. */
export interface BatchHarness {
  readonly ws: TestWorkspace;
  readonly invoker: RecordingInvoker;
  readonly latch: Latch;
  readonly controller: AbortController;
  /** Parse `args` with the batch schema and execute it with a context whose `nested` is the invoker. */
  run(args: unknown): Promise<ToolResult>;
  /** The per-item reports of a batch result. */
  items(result: ToolResult): ItemReport[];
  /** The report of one item by id. */
  item(result: ToolResult, id: string): ItemReport;
}

/** Build a fresh harness; call `ws.cleanup()` when done. */
export function createBatchHarness(latchParties = 2): BatchHarness {
  const ws = createTestWorkspace();
  const latch = createLatch(latchParties);
  const controller = new AbortController();
  const invoker = createRecordingInvoker([...realTools(), ...createTestTools(latch)], () =>
    ws.context(controller.signal),
  );
  const items = (result: ToolResult): ItemReport[] => {
    const results = result.metadata?.results as Omit<ItemReport, 'output'>[] | undefined;
    if (!results) throw new Error(`no batch metadata in ${JSON.stringify(result)}`);
    const bodies = blockBodies(result.output);
    return results.map((entry) => {
      const body = bodies.get(entry.index) ?? '';
      return { ...entry, output: entry.success ? body : body.replace(/^ERROR: /, '') };
    });
  };
  return {
    ws,
    invoker,
    latch,
    controller,
    run(args) {
      const ctx: ToolContext = { ...ws.context(controller.signal), nested: invoker };
      return batchTool.execute(batchTool.parameters.parse(args), ctx);
    },
    items,
    item(result, id) {
      const found = items(result).find((entry) => entry.id === id);
      if (!found) throw new Error(`no item ${id}`);
      return found;
    },
  };
}
