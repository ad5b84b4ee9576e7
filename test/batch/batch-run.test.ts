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
  it('runs steps in ascending order and, by default, every invocation in its own step', async () => {
    const result = await h.run({
      invocations: [
        { id: 'w', tool: 'write', args: { file_path: 'notes/a.txt', content: 'alpha\n' } },
        { id: 'g', tool: 'glob', args: { pattern: '**/*.txt' } },
        { id: 'r', tool: 'read', args: { file_path: 'notes/a.txt' } },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(h.invoker.events).toEqual(['start:w', 'end:w', 'start:g', 'end:g', 'start:r', 'end:r']);
    expect(h.items(result).map((item) => [item.id, item.step, item.status, item.exitCode])).toEqual([
      ['w', 0, 'ok', 0],
      ['g', 1, 'ok', 0],
      ['r', 2, 'ok', 0],
    ]);
    expect(h.item(result, 'g').output).toBe('notes/a.txt');
    expect(h.item(result, 'r').output).toContain('alpha');
    expect(result.output).toMatch(/^batch: 3 invocations in 3 steps: 3 ok, 0 error, 0 skipped\./);
    expect(result.output).toContain('=== r: read (step 2) ok, exit 0 ===');
  });

  it('orders explicit steps numerically, whatever the listed order', async () => {
    const result = await h.run({
      invocations: [
        { id: 'late', tool: 'echo_args', args: {}, step: 10 },
        { id: 'early', tool: 'echo_args', args: {}, step: 2 },
        { id: 'first', tool: 'echo_args', args: {}, step: 0 },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(h.invoker.calls.map((call) => call.id)).toEqual(['first', 'early', 'late']);
    // The summary keeps the listed order.
    expect(h.items(result).map((item) => item.id)).toEqual(['late', 'early', 'first']);
  });

  it('runs a read-only step concurrently: two latch calls release each other', async () => {
    const result = await h.run({
      invocations: [
        { id: 'a', tool: 'latch', args: { timeout_ms: 5000 }, step: 0 },
        { id: 'b', tool: 'latch', args: { timeout_ms: 5000 }, step: 0 },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(h.items(result).map((item) => item.output)).toEqual(['released', 'released']);
    expect(h.invoker.events.slice(0, 2)).toEqual(['start:a', 'start:b']);
  });

  it('with max_concurrency 1 the same latch step runs one at a time (and so times out)', async () => {
    const result = await h.run({
      max_concurrency: 1,
      invocations: [
        { id: 'a', tool: 'latch', args: { timeout_ms: 200 }, step: 0 },
        { id: 'b', tool: 'latch', args: { timeout_ms: 200 }, step: 0 },
      ],
    });
    expect(result.exitCode).toBe(1);
    expect(h.item(result, 'a')).toMatchObject({ status: 'error', output: 'latch timed out with 1 arrived' });
    expect(h.invoker.events).toEqual(['start:a', 'end:a', 'start:b', 'end:b']);
  });

  it('respects max_concurrency on a wide read-only step', async () => {
    const invocations = Array.from({ length: 7 }, (_, i) => ({ id: `s${i}`, tool: 'sleep', args: { ms: 40 }, step: 0 }));
    const result = await h.run({ max_concurrency: 3, invocations });
    expect(result.exitCode).toBe(0);
    expect(h.invoker.maxInFlight()).toBe(3);
    // Items start in listed order.
    expect(h.invoker.calls.map((call) => call.id)).toEqual(invocations.map((item) => item.id));

    const h2 = createBatchHarness();
    try {
      const defaults = Array.from({ length: 9 }, (_, i) => ({ id: `d${i}`, tool: 'sleep', args: { ms: 40 }, step: 0 }));
      expect((await h2.run({ invocations: defaults })).exitCode).toBe(0);
      expect(h2.invoker.maxInFlight()).toBe(4);
    } finally {
      h2.ws.cleanup();
    }
  });

  it('runs a step with any non-read-only tool sequentially, in listed order', async () => {
    const result = await h.run({
      max_concurrency: 8,
      invocations: [
        { id: 'slow', tool: 'bash', args: { command: 'sleep 0.3; echo first >> log.txt' }, step: 0 },
        { id: 'fast', tool: 'bash', args: { command: 'echo second >> log.txt' }, step: 0 },
        { id: 'look', tool: 'read', args: { file_path: 'log.txt' }, step: 1 },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(readFileSync(path.join(h.ws.root, 'log.txt'), 'utf8')).toBe('first\nsecond\n');
    expect(h.invoker.events).toEqual(['start:slow', 'end:slow', 'start:fast', 'end:fast', 'start:look', 'end:look']);
  });

  it('a read-only tool sharing a step with a writer is not run concurrently either', async () => {
    const result = await h.run({
      invocations: [
        { id: 'a', tool: 'latch', args: { timeout_ms: 200 }, step: 0 },
        { id: 'w', tool: 'write', args: { file_path: 'x.txt', content: 'x' }, step: 0 },
        { id: 'b', tool: 'latch', args: { timeout_ms: 200 }, step: 0 },
      ],
    });
    expect(h.invoker.events).toEqual(['start:a', 'end:a', 'start:w', 'end:w', 'start:b', 'end:b']);
    expect(h.item(result, 'a').status).toBe('error');
    expect(h.item(result, 'w').status).toBe('ok');
  });
});

describe('batch: failures', () => {
  it('reports partial failure per item and goes on; exit code 1', async () => {
    h.ws.file('present.txt', 'here\n');
    const result = await h.run({
      invocations: [
        { id: 'missing', tool: 'read', args: { file_path: 'absent.txt' }, step: 0 },
        { id: 'present', tool: 'read', args: { file_path: 'present.txt' }, step: 0 },
        { id: 'bad_args', tool: 'read', args: { nope: true }, step: 1 },
        { id: 'exit3', tool: 'bash', args: { command: 'echo oops; exit 3' }, step: 1 },
        { id: 'after', tool: 'bash', args: { command: 'echo still running' }, step: 2 },
      ],
    });
    expect(result.exitCode).toBe(1);
    expect(h.items(result).map((item) => [item.id, item.status, item.exitCode])).toEqual([
      ['missing', 'error', 1],
      ['present', 'ok', 0],
      ['bad_args', 'error', 1],
      ['exit3', 'error', 3],
      ['after', 'ok', 0],
    ]);
    expect(h.item(result, 'missing').output).toMatch(/absent\.txt/);
    expect(h.item(result, 'exit3').output).toContain('oops');
    expect(result.output).toMatch(/^batch: 5 invocations in 3 steps: 2 ok, 3 error, 0 skipped\./);
    expect(result.output).toContain('=== exit3: bash (step 1) error, exit 3 ===\noops');
  });

  it('refuses a batch inside a batch without running it', async () => {
    const result = await h.run({
      invocations: [
        { id: 'inner', tool: 'batch', args: { invocations: [{ id: 'x', tool: 'echo_args' }] } },
        { id: 'next', tool: 'echo_args', args: { ok: true } },
      ],
    });
    expect(result.exitCode).toBe(1);
    expect(h.item(result, 'inner')).toMatchObject({ status: 'error', exitCode: 1, output: 'recursive batch calls are not allowed' });
    expect(h.item(result, 'next').status).toBe('ok');
    expect(h.invoker.calls.map((call) => call.name)).toEqual(['echo_args']);
  });

  it('an unknown tool is an item error reported by the invoker', async () => {
    const result = await h.run({ invocations: [{ id: 'u', tool: 'no_such_tool' }, { id: 'k', tool: 'echo_args' }] });
    expect(h.item(result, 'u')).toMatchObject({ status: 'error', output: 'Unknown tool "no_such_tool"' });
    expect(h.item(result, 'k').status).toBe('ok');
  });

  it('skips what has not started once the signal is aborted; the running call is cancelled', async () => {
    setTimeout(() => h.controller.abort(), 200);
    const result = await h.run({
      invocations: [
        { id: 'first', tool: 'echo_args', args: {} },
        { id: 'long', tool: 'bash', args: { command: 'sleep 20' } },
        { id: 'w', tool: 'write', args: { file_path: 'never.txt', content: 'no' } },
        { id: 'r1', tool: 'sleep', args: { ms: 1 }, step: 5 },
        { id: 'r2', tool: 'sleep', args: { ms: 1 }, step: 5 },
      ],
    });
    expect(result.exitCode).toBe(1);
    expect(h.items(result).map((item) => [item.id, item.status])).toEqual([
      ['first', 'ok'],
      ['long', 'error'],
      ['w', 'skipped'],
      ['r1', 'skipped'],
      ['r2', 'skipped'],
    ]);
    expect(h.item(result, 'w').exitCode).toBeNull();
    expect(h.invoker.calls.map((call) => call.id)).toEqual(['first', 'long']);
    expect(() => readFileSync(path.join(h.ws.root, 'never.txt'))).toThrow();
    expect(result.output).toContain('The batch was cancelled; items that had not started were skipped.');
    expect(result.output).toMatch(/^batch: 5 invocations in 4 steps: 1 ok, 1 error, 3 skipped\./);
  });

  it('with the signal already aborted, nothing runs', async () => {
    h.controller.abort();
    const result = await h.run({ invocations: [{ id: 'a', tool: 'echo_args' }, { id: 'b', tool: 'echo_args', step: 0 }] });
    expect(result.exitCode).toBe(1);
    expect(h.items(result).every((item) => item.status === 'skipped')).toBe(true);
    expect(h.invoker.calls).toEqual([]);
  });

  it('is a tool error without the nested invoker', async () => {
    const result = await batchTool.execute(batchTool.parameters.parse({ invocations: [{ id: 'a', tool: 'read' }] }), h.ws.context());
    expect(result).toMatchObject({ exitCode: 1, output: 'batch needs the tool invoker' });
  });

  it('caps each item output in the summary and marks it truncated', async () => {
    const result = await h.run({ invocations: [{ id: 'huge', tool: 'big', args: { bytes: 50_000 } }, { id: 'small', tool: 'big', args: { bytes: 10 } }] });
    const huge = h.item(result, 'huge');
    expect(huge.truncated).toBe(true);
    expect(huge.output).toContain('[output cut at 20480 bytes of 50000 in this summary]');
    expect(huge.output.startsWith('x'.repeat(20_480) + '\n')).toBe(true);
    expect(h.item(result, 'small')).toMatchObject({ truncated: false, output: 'x'.repeat(10) });
    expect(Buffer.byteLength(result.output)).toBeLessThan(22_000);
  });

  it('shares the summary budget among many items', async () => {
    const invocations = Array.from({ length: 100 }, (_, i) => ({ id: `b${i}`, tool: 'big', args: { bytes: 5000 }, step: 0 }));
    const result = await h.run({ max_concurrency: 16, invocations });
    expect(result.exitCode).toBe(0);
    expect(h.items(result)).toHaveLength(100);
    expect(h.items(result).every((item) => item.truncated)).toBe(true);
    expect(Buffer.byteLength(result.output)).toBeLessThan(120 * 1024);
  });
});

describe('batch: parameters', () => {
  const parse = (args: unknown): boolean => batchTool.parameters.safeParse(args).success;

  it('defaults args to {} and leaves step and max_concurrency optional', () => {
    expect(batchTool.parameters.parse({ invocations: [{ id: 'a', tool: 'read' }] })).toEqual({ invocations: [{ id: 'a', tool: 'read', args: {} }] });
  });

  it('rejects duplicate ids, empty or oversized invocations, bad ids and unknown fields', () => {
    const dup = batchTool.parameters.safeParse({ invocations: [{ id: 'a', tool: 'read' }, { id: 'a', tool: 'glob' }] });
    expect(dup.success).toBe(false);
    expect(dup.error?.issues[0]).toMatchObject({ path: ['invocations', 1, 'id'], message: 'duplicate id "a"; every invocation needs its own id' });
    expect(parse({ invocations: [] })).toBe(false);
    expect(parse({ invocations: Array.from({ length: 101 }, (_, i) => ({ id: `i${i}`, tool: 'read' })) })).toBe(false);
    expect(parse({ invocations: Array.from({ length: 100 }, (_, i) => ({ id: `i${i}`, tool: 'read' })) })).toBe(true);
    for (const id of ['', 'has space', 'dot.ted', 'x'.repeat(65)]) expect(parse({ invocations: [{ id, tool: 'read' }] }), id).toBe(false);
    expect(parse({ invocations: [{ id: 'A-z_09', tool: 'read' }] })).toBe(true);
    expect(parse({ invocations: [{ id: 'a', tool: 'read', extra: 1 }] })).toBe(false);
    expect(parse({ invocations: [{ id: 'a', tool: 'read' }], extra: 1 })).toBe(false);
    expect(parse({ invocations: [{ id: 'a', tool: 'read', step: -1 }] })).toBe(false);
    expect(parse({ invocations: [{ id: 'a', tool: 'read', step: 1.5 }] })).toBe(false);
    expect(parse({ invocations: [{ id: 'a', tool: 'read', args: [] }] })).toBe(false);
    expect(parse({ invocations: [{ id: 'a', tool: 'read' }], max_concurrency: 0 })).toBe(false);
    expect(parse({ invocations: [{ id: 'a', tool: 'read' }], max_concurrency: 17 })).toBe(false);
    expect(parse({ invocations: [{ id: 'a', tool: 'read' }], max_concurrency: 16 })).toBe(true);
  });

  it('converts to a JSON schema for providers, with a description on every field', () => {
    const schema = z.toJSONSchema(batchTool.parameters, { target: 'draft-7', io: 'input' });
    const text = JSON.stringify(schema);
    expect(text).not.toContain('"description":""');
    expect(schema).toMatchObject({ additionalProperties: false, required: ['invocations'] });
    expect(batchTool).toMatchObject({ name: 'batch', readOnly: false, orchestrator: 'batch' });
    expect(batchTool.description).toContain('$ref');
  });
});
