import { batchTool } from '../../src/runtime/tools/builtin/batch.js';
import type { ToolContext, ToolResult } from '../../src/runtime/tools/define-tool.js';
import { createTestWorkspace, type TestWorkspace } from '../tools/tool-test-context.js';
import { createLatch, createRecordingInvoker, createTestTools, realTools, type Latch, type RecordingInvoker } from './recording-invoker.js';

/** One batch item as reported in the batch's metadata. */
export interface ItemReport {
  id: string;
  tool: string;
  step: number;
  status: 'ok' | 'error' | 'skipped';
  exitCode: number | null;
  output: string;
  truncated: boolean;
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
  const invoker = createRecordingInvoker([...realTools(), ...createTestTools(latch)], () => ws.context(controller.signal));
  const items = (result: ToolResult): ItemReport[] => {
    const batch = result.metadata?.batch as { items: ItemReport[] } | undefined;
    if (!batch) throw new Error(`no batch metadata in ${JSON.stringify(result)}`);
    return batch.items;
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
