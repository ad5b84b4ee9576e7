import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batchTool } from '../../src/runtime/tools/builtin/batch.js';
import { createBatchHarness, type BatchHarness } from './batch-harness.js';

let h: BatchHarness;
beforeEach(() => {
  h = createBatchHarness();
});
afterEach(() => h.ws.cleanup());

describe('batch: steps and concurrency', () => {
  it('runs explicit steps in ascending order and reports per-item blocks and the seed metadata', async () => {
    const result = await h.run({
      invocations: [
        { id: 'w', tool: 'write', args: { file_path: 'notes/a.txt', content: 'alpha\n' }, step: 1 },
        { id: 'g', tool: 'glob', args: { pattern: '**/*.txt' }, step: 2 },
        { id: 'r', tool: 'read', args: { file_path: 'notes/a.txt' }, step: 3 },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(result.errorKind).toBeUndefined();
    expect(h.invoker.events).toEqual(['start:w', 'end:w', 'start:g', 'end:g', 'start:r', 'end:r']);
    expect(h.items(result).map((item) => [item.index, item.id, item.step, item.success, item.exit_code])).toEqual([
      [0, 'w', 1, true, 0],
      [1, 'g', 2, true, 0],
      [2, 'r', 3, true, 0],
    ]);
    expect(h.item(result, 'g').output).toMatch(/^notes\/a\.txt\n/);
    expect(h.item(result, 'r').output).toContain('alpha');
    expect(result.output).toMatch(
      /^--- \[0 \/ step 1: write · w\] ---\nWrote 6 bytes \(1 lines\) to notes\/a\.txt\n\n--- \[1 \/ step 2: glob · g\] ---\n/,
    );
    expect(result.output).toContain('--- [2 / step 3: read · r] ---\n');
    expect(result.metadata).toMatchObject({
      status: 'complete',
      requested_concurrency: 8,
      applied_concurrency: 1,
      execution_mode: 'staged',
      steps: 3,
      highest_step: 3,
      total_count: 3,
      success_count: 3,
      failure_count: 0,
      failed_indices: [],
      binding_errors: [],
    });
    const write = h.item(result, 'w');
    expect(write.output_bytes).toBe(Buffer.byteLength(write.output));
    expect(write.metadata).toMatchObject({ file_path: 'notes/a.txt', created: true });
    expect(write.error_kind).toBeNull();
  });

  it('puts every invocation in step 1 by default: a step with a writer runs serially in listed order', async () => {
    const result = await h.run({
      invocations: [
        { tool: 'bash', args: { command: 'sleep 0.2; echo one >> log.txt' } },
        { tool: 'bash', args: { command: 'echo two >> log.txt' } },
        { tool: 'echo_args', args: { x: 1 } },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(readFileSync(path.join(h.ws.root, 'log.txt'), 'utf8')).toBe('one\ntwo\n');
    // Items without an id are named by their position in the child call id.
    expect(h.invoker.events).toEqual(['start:#0', 'end:#0', 'start:#1', 'end:#1', 'start:#2', 'end:#2']);
    expect(result.metadata).toMatchObject({
      execution_mode: 'serial',
      steps: 1,
      highest_step: 1,
      applied_concurrency: 1,
    });
    expect(h.items(result).map((item) => [item.id, item.step])).toEqual([
      [null, 1],
      [null, 1],
      [null, 1],
    ]);
    expect(result.output).toContain('--- [2 / step 1: echo_args] ---\n{"x":1}');
  });

  it('orders explicit steps numerically, whatever the listed order', async () => {
    const result = await h.run({
      invocations: [
        { id: 'late', tool: 'echo_args', args: {}, step: 10 },
        { id: 'early', tool: 'echo_args', args: {}, step: 2 },
        { id: 'first', tool: 'echo_args', args: {}, step: 1 },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(h.invoker.calls.map((call) => call.id)).toEqual(['first', 'early', 'late']);
    // The summary keeps the listed order.
    expect(h.items(result).map((item) => item.id)).toEqual(['late', 'early', 'first']);
    expect(result.metadata).toMatchObject({ steps: 3, highest_step: 10, execution_mode: 'staged' });
  });

  it('runs a read-only step concurrently by default: two latch calls release each other', async () => {
    const result = await h.run({
      invocations: [
        { id: 'a', tool: 'latch', args: { timeout_ms: 5000 } },
        { id: 'b', tool: 'latch', args: { timeout_ms: 5000 } },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(h.items(result).map((item) => item.output)).toEqual(['released', 'released']);
    expect(h.invoker.events.slice(0, 2)).toEqual(['start:a', 'start:b']);
    expect(result.metadata).toMatchObject({
      execution_mode: 'parallel',
      requested_concurrency: 8,
      applied_concurrency: 2,
    });
  });

  it('with max_concurrency 1 the same latch step runs one at a time; one failure is a partial failure (still success)', async () => {
    const result = await h.run({
      max_concurrency: 1,
      invocations: [
        { id: 'a', tool: 'latch', args: { timeout_ms: 200 } },
        { id: 'b', tool: 'latch', args: { timeout_ms: 200 } },
      ],
    });
    expect(h.invoker.events).toEqual(['start:a', 'end:a', 'start:b', 'end:b']);
    expect(h.item(result, 'a')).toMatchObject({
      status: 'error',
      success: false,
      output: 'latch timed out with 1 arrived',
    });
    expect(h.item(result, 'b')).toMatchObject({ status: 'ok', output: 'released' });
    expect(result.exitCode).toBe(0);
    expect(result.errorKind).toBeUndefined();
    expect(result.metadata).toMatchObject({
      status: 'partial_failure',
      requested_concurrency: 1,
      applied_concurrency: 1,
      execution_mode: 'serial',
      success_count: 1,
      failure_count: 1,
      failed_indices: [0],
    });
    expect(result.output).toContain('--- [0 / step 1: latch · a] ---\nERROR: latch timed out with 1 arrived');
    expect(result.output).toMatch(
      /1 of 2 invocation\(s\) failed \(failed_indices: 0\); the other results are valid, so retry only failed indices\.$/,
    );
  });

  it('respects max_concurrency on a wide read-only step, and defaults to 8', async () => {
    const invocations = Array.from({ length: 7 }, (_, i) => ({ id: `s${i}`, tool: 'sleep', args: { ms: 40 } }));
    const result = await h.run({ max_concurrency: 3, invocations });
    expect(result.exitCode).toBe(0);
    expect(h.invoker.maxInFlight()).toBe(3);
    expect(result.metadata).toMatchObject({
      requested_concurrency: 3,
      applied_concurrency: 3,
      execution_mode: 'parallel',
    });
    // Items start in listed order.
    expect(h.invoker.calls.map((call) => call.id)).toEqual(invocations.map((item) => item.id));

    const h2 = createBatchHarness();
    try {
      const defaults = Array.from({ length: 10 }, (_, i) => ({ id: `d${i}`, tool: 'sleep', args: { ms: 40 } }));
      expect((await h2.run({ invocations: defaults })).exitCode).toBe(0);
      expect(h2.invoker.maxInFlight()).toBe(8);
    } finally {
      h2.ws.cleanup();
    }
  });

  it('runs a step with any non-read-only tool sequentially, in listed order', async () => {
    const result = await h.run({
      max_concurrency: 8,
      invocations: [
        { id: 'slow', tool: 'bash', args: { command: 'sleep 0.3; echo first >> log.txt' }, step: 1 },
        { id: 'fast', tool: 'bash', args: { command: 'echo second >> log.txt' }, step: 1 },
        { id: 'look', tool: 'read', args: { file_path: 'log.txt' }, step: 2 },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(readFileSync(path.join(h.ws.root, 'log.txt'), 'utf8')).toBe('first\nsecond\n');
    expect(h.invoker.events).toEqual(['start:slow', 'end:slow', 'start:fast', 'end:fast', 'start:look', 'end:look']);
  });

  it('a read-only tool sharing a step with a writer is not run concurrently either', async () => {
    const result = await h.run({
      invocations: [
        { id: 'a', tool: 'latch', args: { timeout_ms: 200 } },
        { id: 'w', tool: 'write', args: { file_path: 'x.txt', content: 'x' } },
        { id: 'b', tool: 'latch', args: { timeout_ms: 200 } },
      ],
    });
    expect(h.invoker.events).toEqual(['start:a', 'end:a', 'start:w', 'end:w', 'start:b', 'end:b']);
    expect(h.item(result, 'a').status).toBe('error');
    expect(h.item(result, 'w').status).toBe('ok');
  });

  it('decides read-only per call: edit with dry_run shares a concurrent step, a real edit does not', async () => {
    h.ws.file('a.txt', 'one\n');
    const dry = await h.run({
      invocations: [
        { id: 's', tool: 'sleep', args: { ms: 300 } },
        { id: 'd', tool: 'edit', args: { file_path: 'a.txt', old_string: 'one', new_string: 'two', dry_run: true } },
      ],
    });
    expect(dry.metadata).toMatchObject({ execution_mode: 'parallel', applied_concurrency: 2, status: 'complete' });
    expect(h.invoker.events).toEqual(['start:s', 'start:d', 'end:d', 'end:s']);
    expect(h.item(dry, 'd').output).toBe('Dry run: would replace 1 occurrence(s) in a.txt; nothing was written');
    const h2 = createBatchHarness();
    try {
      h2.ws.file('a.txt', 'one\n');
      const real = await h2.run({
        invocations: [
          { tool: 'edit', args: { file_path: 'a.txt', old_string: 'one', new_string: 'two' } },
          { tool: 'echo_args', args: {} },
        ],
      });
      expect(real.metadata).toMatchObject({ execution_mode: 'serial', status: 'complete' });
      expect(readFileSync(path.join(h2.ws.root, 'a.txt'), 'utf8')).toBe('two\n');
    } finally {
      h2.ws.cleanup();
    }
  });
});

describe('batch: failures', () => {
  it('reports partial failure per item and goes on; still a success with the failed indices', async () => {
    h.ws.file('present.txt', 'here\n');
    const result = await h.run({
      invocations: [
        { id: 'missing', tool: 'read', args: { file_path: 'absent.txt' }, step: 1 },
        { id: 'present', tool: 'read', args: { file_path: 'present.txt' }, step: 1 },
        { id: 'bad_args', tool: 'read', args: { nope: true }, step: 2 },
        { id: 'exit3', tool: 'bash', args: { command: 'echo oops; exit 3' }, step: 2 },
        { id: 'after', tool: 'bash', args: { command: 'echo still running' }, step: 3 },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(h.items(result).map((item) => [item.id, item.status, item.exit_code])).toEqual([
      ['missing', 'error', 1],
      ['present', 'ok', 0],
      ['bad_args', 'error', 1],
      ['exit3', 'error', 3],
      ['after', 'ok', 0],
    ]);
    expect(h.item(result, 'missing').output).toMatch(/absent\.txt/);
    expect(h.item(result, 'missing').error_kind).toEqual({ type: 'not_found', path: 'absent.txt' });
    expect(h.item(result, 'bad_args').error_kind).toMatchObject({ type: 'invalid_argument' });
    expect(h.item(result, 'exit3').output).toContain('oops');
    expect(result.metadata).toMatchObject({
      status: 'partial_failure',
      total_count: 5,
      success_count: 2,
      failure_count: 3,
      failed_indices: [0, 2, 3],
      steps: 3,
    });
    expect(result.output).toContain('--- [3 / step 2: bash · exit3] ---\nERROR: oops');
    expect(result.output).toContain('3 of 5 invocation(s) failed (failed_indices: 0, 2, 3)');
    expect(result.output).toContain('retry only failed indices');
  });

  it('is an error result with a partial_failure error kind when every invocation failed', async () => {
    const result = await h.run({
      invocations: [
        { id: 'm1', tool: 'read', args: { file_path: 'absent1.txt' } },
        { id: 'm2', tool: 'read', args: { file_path: 'absent2.txt' } },
      ],
    });
    expect(result.exitCode).toBe(1);
    expect(result.errorKind).toEqual({ type: 'partial_failure', failed: 2, total: 2 });
    expect(result.metadata).toMatchObject({
      status: 'failed',
      success_count: 0,
      failure_count: 2,
      failed_indices: [0, 1],
    });
    expect(result.output).toMatch(/All 2 invocation\(s\) failed\.$/);
  });

  it('refuses a batch inside a batch without running it', async () => {
    const result = await h.run({
      invocations: [
        { id: 'inner', tool: 'batch', args: { invocations: [{ id: 'x', tool: 'echo_args', args: {} }] } },
        { id: 'next', tool: 'echo_args', args: { ok: true } },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(h.item(result, 'inner')).toMatchObject({
      status: 'error',
      exit_code: 1,
      output: 'recursive batch calls are not allowed',
    });
    expect(h.item(result, 'inner').error_kind).toEqual({
      type: 'unsupported',
      message: 'recursive batch calls are not allowed',
    });
    expect(h.item(result, 'next').status).toBe('ok');
    expect(h.invoker.calls.map((call) => call.name)).toEqual(['echo_args']);
  });

  it('an unknown tool is an item error reported by the invoker', async () => {
    const result = await h.run({
      invocations: [
        { id: 'u', tool: 'no_such_tool', args: {} },
        { id: 'k', tool: 'echo_args', args: {} },
      ],
    });
    expect(h.item(result, 'u')).toMatchObject({ status: 'error', output: 'Unknown tool "no_such_tool"' });
    expect(h.item(result, 'k').status).toBe('ok');
  });

  it('skips what has not started once the signal is aborted; the running call is cancelled', async () => {
    setTimeout(() => h.controller.abort(), 200);
    const result = await h.run({
      invocations: [
        { id: 'first', tool: 'echo_args', args: {}, step: 1 },
        { id: 'long', tool: 'bash', args: { command: 'sleep 20' }, step: 2 },
        { id: 'w', tool: 'write', args: { file_path: 'never.txt', content: 'no' }, step: 3 },
        { id: 'r1', tool: 'sleep', args: { ms: 1 }, step: 5 },
        { id: 'r2', tool: 'sleep', args: { ms: 1 }, step: 5 },
      ],
    });
    expect(h.items(result).map((item) => [item.id, item.status])).toEqual([
      ['first', 'ok'],
      ['long', 'error'],
      ['w', 'skipped'],
      ['r1', 'skipped'],
      ['r2', 'skipped'],
    ]);
    expect(h.item(result, 'w').exit_code).toBeNull();
    expect(h.item(result, 'w').error_kind).toEqual({ type: 'cancelled', op: 'write' });
    expect(h.invoker.calls.map((call) => call.id)).toEqual(['first', 'long']);
    expect(() => readFileSync(path.join(h.ws.root, 'never.txt'))).toThrow();
    expect(result.output).toContain('The batch was cancelled; invocations that had not started were skipped.');
    expect(result.metadata).toMatchObject({
      status: 'partial_failure',
      success_count: 1,
      failure_count: 4,
      failed_indices: [1, 2, 3, 4],
    });
  });

  it('with the signal already aborted, nothing runs', async () => {
    h.controller.abort();
    const result = await h.run({
      invocations: [
        { id: 'a', tool: 'echo_args', args: {} },
        { id: 'b', tool: 'echo_args', args: {}, step: 2 },
      ],
    });
    expect(result.exitCode).toBe(1);
    expect(result.errorKind).toEqual({ type: 'partial_failure', failed: 2, total: 2 });
    expect(h.items(result).every((item) => item.status === 'skipped')).toBe(true);
    expect(h.invoker.calls).toEqual([]);
  });

  it('is a tool error without the nested invoker', async () => {
    const result = await batchTool.execute(
      batchTool.parameters.parse({ invocations: [{ id: 'a', tool: 'read', args: {} }] }),
      h.ws.context(),
    );
    expect(result).toMatchObject({ exitCode: 1, output: 'batch needs the tool invoker' });
  });

  it('caps each item output in the summary and marks it truncated', async () => {
    const result = await h.run({
      invocations: [
        { id: 'huge', tool: 'big', args: { bytes: 50_000 } },
        { id: 'small', tool: 'big', args: { bytes: 10 } },
      ],
    });
    const huge = h.item(result, 'huge');
    expect(huge.truncated).toBe(true);
    expect(huge.output_bytes).toBe(50_000);
    expect(huge.output).toContain('[output cut at 20480 bytes of 50000 in this summary]');
    expect(huge.output.startsWith('x'.repeat(20_480) + '\n')).toBe(true);
    expect(h.item(result, 'small')).toMatchObject({ truncated: false, output: 'x'.repeat(10) });
    expect(Buffer.byteLength(result.output)).toBeLessThan(22_000);
  });

  it('shares the summary budget among many items', async () => {
    const invocations = Array.from({ length: 32 }, (_, i) => ({ id: `b${i}`, tool: 'big', args: { bytes: 5000 } }));
    const result = await h.run({ max_concurrency: 16, invocations });
    expect(result.exitCode).toBe(0);
    expect(h.items(result)).toHaveLength(32);
    expect(h.items(result).every((item) => item.truncated)).toBe(true);
    expect(Buffer.byteLength(result.output)).toBeLessThan(100 * 1024);
  });
});

describe('batch: parameters', () => {
  const parse = (args: unknown): boolean => batchTool.parameters.safeParse(args).success;

  it('requires tool and args; id, step and max_concurrency are optional', () => {
    expect(batchTool.parameters.parse({ invocations: [{ tool: 'read', args: {} }] })).toEqual({
      invocations: [{ tool: 'read', args: {} }],
    });
    const noArgs = batchTool.parameters.safeParse({ invocations: [{ id: 'a', tool: 'read' }] });
    expect(noArgs.success).toBe(false);
    expect(noArgs.error?.issues[0].path).toEqual(['invocations', 0, 'args']);
    expect(parse({ invocations: [{ id: 'a', args: {} }] })).toBe(false);
  });

  it('rejects duplicate ids, empty or oversized invocations, bad ids, steps out of 1..32 and unknown fields', () => {
    const item = (extra: Record<string, unknown> = {}) => ({ tool: 'read', args: {}, ...extra });
    const dup = batchTool.parameters.safeParse({ invocations: [item({ id: 'a' }), item({ id: 'a' })] });
    expect(dup.success).toBe(false);
    expect(dup.error?.issues[0]).toMatchObject({
      path: ['invocations', 1, 'id'],
      message: 'duplicate id "a"; every invocation needs its own id',
    });
    // Items without an id never collide.
    expect(parse({ invocations: [item(), item()] })).toBe(true);
    expect(parse({ invocations: [] })).toBe(false);
    expect(parse({ invocations: Array.from({ length: 33 }, (_, i) => item({ id: `i${i}` })) })).toBe(false);
    expect(parse({ invocations: Array.from({ length: 32 }, (_, i) => item({ id: `i${i}` })) })).toBe(true);
    for (const id of ['', 'has space', 'dot.ted', 'x'.repeat(65)])
      expect(parse({ invocations: [item({ id })] }), id).toBe(false);
    expect(parse({ invocations: [item({ id: 'A-z_09' })] })).toBe(true);
    expect(parse({ invocations: [item({ extra: 1 })] })).toBe(false);
    expect(parse({ invocations: [item()], extra: 1 })).toBe(false);
    for (const step of [0, -1, 33, 1.5]) expect(parse({ invocations: [item({ step })] }), String(step)).toBe(false);
    for (const step of [1, 32]) expect(parse({ invocations: [item({ step })] }), String(step)).toBe(true);
    expect(parse({ invocations: [item({ args: [] })] })).toBe(false);
    expect(parse({ invocations: [item()], max_concurrency: 0 })).toBe(false);
    expect(parse({ invocations: [item()], max_concurrency: 17 })).toBe(false);
    expect(parse({ invocations: [item()], max_concurrency: 16 })).toBe(true);
  });

  it('converts to a JSON schema for providers, with a description on every field', () => {
    const schema = z.toJSONSchema(batchTool.parameters, { target: 'draft-7', io: 'input' });
    const text = JSON.stringify(schema);
    expect(text).not.toContain('"description":""');
    expect(schema).toMatchObject({ additionalProperties: false, required: ['invocations'] });
    expect(schema).toMatchObject({
      properties: { invocations: { items: { required: ['tool', 'args'], additionalProperties: false } } },
    });
    expect(batchTool).toMatchObject({ name: 'batch', readOnly: false, orchestrator: 'batch' });
    expect(batchTool.description).toContain('$ref');
  });
});
