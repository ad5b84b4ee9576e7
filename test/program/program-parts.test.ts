import { describe, expect, it } from 'vitest';
import { cutToBytes, ProgramLog } from '../../src/runtime/program/program-log.js';
import {
  ProgramCallRefusedError,
  ProgramToolGate,
  RECURSIVE_PROGRAM_ERROR,
} from '../../src/runtime/program/program-tool-gate.js';
import type { ProgramToolResult } from '../../src/runtime/program/program-types.js';
import { readFileViaTool } from '../../src/runtime/program/read-file-via-tool.js';
import { fakeRead, numbered } from './program-test-support.js';

describe('ProgramLog', () => {
  it('keeps lines up to the byte bound and says how much was dropped', () => {
    const log = new ProgramLog(20);
    log.append('0123456789');
    log.append('abcdefghij');
    log.append('more');
    log.dropped(7);
    expect(log.text()).toBe(
      '0123456789\nabcdefgh\n[logs truncated at limits.maxOutputBytes (20 bytes); 14 more bytes dropped]',
    );
    const untouched = new ProgramLog(100);
    untouched.append('one');
    untouched.append('');
    expect(untouched.text()).toBe('one\n');
  });

  it('cuts on UTF-8 character boundaries', () => {
    expect(cutToBytes('aé€😀', 4)).toBe('aé');
    expect(cutToBytes('aé€😀', 6)).toBe('aé€');
    expect(cutToBytes('short', 10)).toBe('short');
  });
});

describe('readFileViaTool', () => {
  it('pages on has_more, falling back to the read tool note when there is no metadata', async () => {
    const lines = Array.from({ length: 5 }, (_, i) => `l${i + 1}`);
    const read = fakeRead({ 'f.txt': lines.join('\n') }, 2);
    const withoutMetadata = async (_name: string, args: unknown): Promise<ProgramToolResult> => {
      const { output, exitCode } = await read(args as Record<string, unknown>);
      return { output, exitCode };
    };
    expect(await readFileViaTool(withoutMetadata, 'f.txt')).toBe(lines.join('\n'));
  });

  it('re-reads from the last (possibly cut) line when the invoker truncated a page', async () => {
    const calls: unknown[] = [];
    const call = async (_name: string, args: unknown): Promise<ProgramToolResult> => {
      calls.push(args);
      const offset = (args as { offset?: number }).offset ?? 1;
      if (offset === 1)
        return {
          output: `${numbered(['alpha', 'bravo', 'cha'])}\n[output truncated at 40 bytes of 900]`,
          exitCode: 0,
          truncated: true,
        };
      return { output: numbered(['charlie', 'delta'], 3), exitCode: 0, metadata: { has_more: false } };
    };
    expect(await readFileViaTool(call, 'f.txt')).toBe('alpha\nbravo\ncharlie\ndelta');
    expect(calls).toEqual([{ file_path: 'f.txt' }, { file_path: 'f.txt', offset: 3 }]);
  });

  it('throws on failures and on output it does not understand', async () => {
    await expect(readFileViaTool(async () => ({ output: 'File not found: x', exitCode: 1 }), 'x')).rejects.toThrow(
      'readFile("x") failed: File not found: x',
    );
    await expect(readFileViaTool(async () => ({ output: 'something else', exitCode: 0 }), 'x')).rejects.toThrow(
      /unexpected form/,
    );
    await expect(
      readFileViaTool(async () => ({ output: numbered(['partial']), exitCode: 0, truncated: true }), 'x'),
    ).rejects.toThrow(/too long/);
  });
});

describe('ProgramToolGate', () => {
  it('checks recursion, the allowed list and the call limit before calling, and records in order', async () => {
    const made: string[] = [];
    let clock = 0;
    const gate = new ProgramToolGate({
      allowedTools: ['read', 'program'],
      maxToolCalls: 2,
      maxOutputBytes: 4,
      signal: new AbortController().signal,
      now: () => (clock += 5),
      callTool: async (name) => {
        made.push(name);
        return { output: `${name} output`, exitCode: name === 'read' ? 0 : 1 };
      },
    });
    await expect(gate.call('program', {})).rejects.toThrow(RECURSIVE_PROGRAM_ERROR);
    await expect(gate.call('bash', {})).rejects.toBeInstanceOf(ProgramCallRefusedError);
    expect(await gate.call('read', { file_path: 'a' })).toEqual({ output: 'read', exitCode: 0, truncated: true });
    await gate.call('read', { file_path: 'b' });
    await expect(gate.call('read', {})).rejects.toThrow(
      'PTC script exceeded maxToolCalls=2 (limits.maxToolCalls); "read" was not called',
    );
    await expect(gate.call('parallel_task', {})).rejects.toThrow(
      "tool 'parallel_task' is not allowed for this PTC script",
    );
    await expect(gate.call('task', { tasks: [{}, {}] })).rejects.toThrow(
      "tool 'task' is not allowed for this PTC script with 2 tasks",
    );
    expect(made).toEqual(['read', 'read']);
    expect(gate.snapshot()).toEqual([
      { name: 'read', args: { file_path: 'a' }, exitCode: 0, success: true, outputBytes: 4, durationMs: 5 },
      { name: 'read', args: { file_path: 'b' }, exitCode: 0, success: true, outputBytes: 4, durationMs: 5 },
    ]);
  });

  it('names an empty allowed list', async () => {
    const gate = new ProgramToolGate({
      allowedTools: [],
      maxToolCalls: 5,
      maxOutputBytes: 100,
      signal: new AbortController().signal,
      now: Date.now,
      callTool: async () => ({ output: '', exitCode: 0 }),
    });
    await expect(gate.call('read', {})).rejects.toThrow(
      "tool 'read' is not allowed for this PTC script; allowed tools: (none)",
    );
  });
});
