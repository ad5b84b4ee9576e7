import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bindRefs, isRef, type RefSource } from '../../src/runtime/tools/batch/batch-ref.js';
import { createBatchHarness, type BatchHarness } from './batch-harness.js';

let h: BatchHarness;
beforeEach(() => {
  h = createBatchHarness();
});
afterEach(() => h.ws.cleanup());

const JSON_DOC = JSON.stringify({
  files: ['a.txt', 'b.txt'],
  nested: { deep: [{ name: 'n0' }, { name: 'n1' }] },
  n: 7,
  t: true,
  z: null,
});

describe('batch: $ref binding', () => {
  it('binds output: the path glob found is read in the next step', async () => {
    h.ws.file('src/only.ts', 'export const only = 1;\n');
    const result = await h.run({
      invocations: [
        { id: 'find', tool: 'glob', args: { pattern: '**/*.ts' } },
        { id: 'open', tool: 'read', args: { file_path: { $ref: 'find.output_lines.0' } }, step: 2 },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(h.invoker.calls[1].args).toEqual({ file_path: 'src/only.ts' });
    expect(h.item(result, 'open').output).toContain('export const only = 1;');
    expect(result.metadata).toMatchObject({ status: 'complete', binding_errors: [] });
  });

  it('binds metadata: read back the file from the path write reported', async () => {
    const result = await h.run({
      invocations: [
        { id: 'w', tool: 'write', args: { file_path: './notes/../notes/todo.md', content: '- ship it\n' } },
        { id: 'r', tool: 'read', args: { file_path: { $ref: 'w.metadata.file_path' } }, step: 2 },
        { id: 'copy', tool: 'write', args: { file_path: 'copy.md', content: { $ref: 'w.output' } }, step: 2 },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(h.invoker.calls[1].args).toEqual({ file_path: 'notes/todo.md' });
    expect(h.item(result, 'r').output).toContain('- ship it');
    expect(readFileSync(path.join(h.ws.root, 'copy.md'), 'utf8')).toBe('Wrote 10 bytes (1 lines) to notes/todo.md');
  });

  it('binds json paths (object keys and array indices) and exitCode, deep inside objects and arrays', async () => {
    h.ws.file('b.txt', 'bee\n');
    h.ws.file('doc.json', JSON_DOC);
    const result = await h.run({
      invocations: [
        { id: 'j', tool: 'bash', args: { command: 'cat doc.json' } },
        { id: 'r', tool: 'read', args: { file_path: { $ref: 'j.json.files.1' } }, step: 2 },
        {
          id: 'e',
          tool: 'echo_args',
          step: 2,
          args: {
            list: [
              1,
              { name: { $ref: 'j.json.nested.deep.1.name' } },
              [{ $ref: 'j.exitCode' }, { $ref: 'j.exit_code' }],
            ],
            whole: { $ref: 'j.json.nested' },
            n: { $ref: 'j.json.n' },
            t: { $ref: 'j.json.t' },
            z: { $ref: 'j.json.z' },
            all: { $ref: 'j.json' },
            notARef: { $ref: 'j.output', other: 1 },
          },
        },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(h.invoker.calls.find((call) => call.id === 'r')?.args).toEqual({ file_path: 'b.txt' });
    expect(h.item(result, 'r').output).toContain('bee');
    expect(JSON.parse(h.item(result, 'e').output)).toEqual({
      list: [1, { name: 'n1' }, [0, 0]],
      whole: { deep: [{ name: 'n0' }, { name: 'n1' }] },
      n: 7,
      t: true,
      z: null,
      all: JSON.parse(JSON_DOC),
      notARef: { $ref: 'j.output', other: 1 },
    });
  });

  it('refs can reach back over several steps and into test-tool metadata arrays', async () => {
    const result = await h.run({
      invocations: [
        { id: 'a', tool: 'echo_args', args: { x: 1, y: 2 } },
        { id: 'b', tool: 'echo_args', args: {}, step: 2 },
        {
          id: 'c',
          tool: 'echo_args',
          args: { key: { $ref: 'a.metadata.keys.1' }, keys: { $ref: 'a.metadata.keys' } },
          step: 3,
        },
      ],
    });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(h.item(result, 'c').output)).toEqual({ key: 'y', keys: ['x', 'y'] });
  });

  it('fails only the item with a bad $ref, without running it, and says why', async () => {
    h.ws.file('doc.json', JSON_DOC);
    const result = await h.run({
      invocations: [
        { id: 'j', tool: 'bash', args: { command: 'cat doc.json' }, step: 1 },
        { id: 'plain', tool: 'bash', args: { command: 'echo not json' }, step: 1 },
        { id: 'broken', tool: 'read', args: { file_path: 'absent.txt' }, step: 1 },
        { id: 'same', tool: 'echo_args', args: { v: { $ref: 'j.output' } }, step: 1 },
        { id: 'unknown', tool: 'echo_args', args: { v: { $ref: 'nobody.output' } }, step: 2 },
        { id: 'later', tool: 'echo_args', args: { v: { $ref: 'end.output' } }, step: 2 },
        { id: 'failed', tool: 'echo_args', args: { v: { $ref: 'broken.output' } }, step: 2 },
        { id: 'range', tool: 'echo_args', args: { v: [{ $ref: 'j.json.files.5' }] }, step: 2 },
        { id: 'key', tool: 'echo_args', args: { v: { $ref: 'j.json.nested.missing' } }, step: 2 },
        { id: 'proto', tool: 'echo_args', args: { v: { $ref: 'j.json.__proto__' } }, step: 2 },
        { id: 'index', tool: 'echo_args', args: { v: { $ref: 'j.json.files.first' } }, step: 2 },
        { id: 'scalar', tool: 'echo_args', args: { v: { $ref: 'j.json.n.digits' } }, step: 2 },
        { id: 'notjson', tool: 'echo_args', args: { v: { $ref: 'plain.json.x' } }, step: 2 },
        { id: 'nometa', tool: 'echo_args', args: { v: { $ref: 'j.metadata.nothing' } }, step: 2 },
        { id: 'field', tool: 'echo_args', args: { v: { $ref: 'j.stdout' } }, step: 2 },
        { id: 'outpath', tool: 'echo_args', args: { v: { $ref: 'j.output.length' } }, step: 2 },
        { id: 'nopath', tool: 'echo_args', args: { v: { $ref: 'j' } }, step: 2 },
        { id: 'empty', tool: 'echo_args', args: { v: { $ref: 'j.json..files' } }, step: 2 },
        { id: 'fine', tool: 'echo_args', args: { v: { $ref: 'j.json.files.0' } }, step: 2 },
        { id: 'end', tool: 'echo_args', args: {}, step: 3 },
      ],
    });
    // Some items succeeded, so the batch is a partial failure, not an error.
    expect(result.exitCode).toBe(0);
    const output = (id: string): string => h.item(result, id).output;
    expect(output('same')).toBe(
      '$ref "j.output": "j" is in step 1, which does not finish before this step (1); only results of earlier steps can be referenced. The item was not run.',
    );
    expect(output('unknown')).toMatch(/^\$ref "nobody\.output": no invocation has the id "nobody"/);
    expect(output('later')).toMatch(
      /^\$ref "end\.output": "end" is in step 3, which does not finish before this step \(2\)/,
    );
    expect(output('failed')).toMatch(
      /^\$ref "broken\.output": "broken" failed \(exit code 1\), so its result cannot be used/,
    );
    expect(output('range')).toMatch(
      /^\$ref "j\.json\.files\.5": index 5 is out of range at json\.files \(array of 2\)/,
    );
    expect(output('key')).toMatch(/^\$ref "j\.json\.nested\.missing": no key "missing" at json\.nested/);
    expect(output('proto')).toMatch(/^\$ref "j\.json\.__proto__": no key "__proto__" at json/);
    expect(output('index')).toMatch(/json\.files is an array; index it with a number, not "first"/);
    expect(output('scalar')).toMatch(/cannot read "digits" of a number at json\.n/);
    expect(output('notjson')).toMatch(/^\$ref "plain\.json\.x": the output of "plain" is not valid JSON: /);
    expect(output('nometa')).toMatch(/no key "nothing" at metadata/);
    expect(output('field')).toMatch(
      /unknown field "stdout"; use output, output_lines\.<n>, exit_code, metadata\.<key> or json\.<path>/,
    );
    expect(output('outpath')).toMatch(/output is a string and has no fields; use "j\.json\.length"/);
    expect(output('nopath')).toMatch(/^\$ref "j": expected "<id>\.<field>"/);
    expect(output('empty')).toMatch(/empty segment/);

    const failedIds = [
      'same',
      'unknown',
      'later',
      'failed',
      'range',
      'key',
      'proto',
      'index',
      'scalar',
      'notjson',
      'nometa',
      'field',
      'outpath',
      'nopath',
      'empty',
    ];
    for (const id of failedIds)
      expect(h.item(result, id), id).toMatchObject({
        status: 'error',
        exit_code: 1,
        error_kind: { type: 'invalid_argument' },
      });
    const bindingErrors = (result.metadata?.binding_errors ?? []) as { id: string; index: number; message: string }[];
    expect(bindingErrors.map((entry) => entry.id)).toEqual(failedIds);
    expect(bindingErrors[0]).toEqual({
      index: 3,
      id: 'same',
      message: output('same').replace(/\. The item was not run\.$/, ''),
    });
    expect(result.metadata).toMatchObject({ status: 'partial_failure' });
    // None of the bad items reached the invoker; the good ones around them ran.
    const called = h.invoker.calls.map((call) => call.id);
    for (const id of failedIds) expect(called, id).not.toContain(id);
    expect(h.item(result, 'fine').status).toBe('ok');
    expect(JSON.parse(output('fine'))).toEqual({ v: 'a.txt' });
    expect(h.item(result, 'end').status).toBe('ok');
    expect(h.item(result, 'broken').status).toBe('error');
  });

  it('bindRefs: skipped sources, absent results, the exact $ref shape and a nesting bound', () => {
    const sources = new Map<string, RefSource>([
      ['s', { step: 0, result: { status: 'skipped', exitCode: null, output: '', truncated: false } }],
      ['p', { step: 0 }],
      ['t', { step: 0, result: { status: 'ok', exitCode: 0, output: '{"a"', truncated: true } }],
    ]);
    expect(bindRefs({ v: { $ref: 's.output' } }, 1, sources)).toEqual({
      ok: false,
      error: '$ref "s.output": "s" was skipped, so it has no result',
    });
    expect(bindRefs({ v: { $ref: 'p.output' } }, 1, sources)).toEqual({
      ok: false,
      error: '$ref "p.output": "p" has no result',
    });
    const truncated = bindRefs({ v: { $ref: 't.json.a' } }, 1, sources);
    expect(truncated.ok ? '' : truncated.error).toMatch(
      /^\$ref "t\.json\.a": the output of "t" is not valid JSON \(the output was truncated\)/,
    );
    expect(isRef({ $ref: 'a.output' })).toBe(true);
    expect(isRef({ $ref: 3 })).toBe(false);
    expect(isRef({ $ref: 'a.output', x: 1 })).toBe(false);
    expect(isRef([{ $ref: 'a.output' }])).toBe(false);
    // A "__proto__" key in arguments stays a plain data key after binding.
    const withProto = JSON.parse('{"__proto__": {"polluted": true}, "k": 1}') as unknown;
    const bound = bindRefs(withProto, 1, sources);
    expect(bound.ok && Object.getPrototypeOf(bound.value)).toBe(Object.prototype);
    expect(bound.ok && Object.keys(bound.value as object)).toEqual(['__proto__', 'k']);
    let deep: unknown = 'leaf';
    for (let i = 0; i < 500; i++) deep = [deep];
    expect(bindRefs(deep, 1, sources)).toEqual({ ok: false, error: 'arguments are nested deeper than 200 levels' });
  });
});
