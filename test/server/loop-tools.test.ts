import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { hostProcessesWith } from '../sandbox/sandbox-helpers.js';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../support/fake-provider.js';
import {
  createSession,
  eventually,
  history,
  ofType,
  runAndWait,
  runEvents,
  useTestServers,
} from '../support/run-helpers.js';

const server = useTestServers();

function toolContents(req: RecordedRequest): string[] {
  return req.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
}

describe('tool invocation over HTTP', () => {
  it('toolTimeoutMs: a slow bash call becomes an error result naming toolTimeoutMs, its process group is killed, and the run goes on', async () => {
    const t = await server();
    const id = await createSession(t, { toolTimeoutMs: 300 });
    t.fake.script(
      { toolCalls: [{ id: 'slow', name: 'bash', arguments: { command: 'sleep 20.417 & echo $! > sleep.pid; wait' } }] },
      { text: 'The command was too slow.' },
    );
    const started = Date.now();
    const { run, result, runId } = await runAndWait(t, id, 'run it');
    expect(Date.now() - started).toBeLessThan(10_000);
    t.fake.assertDone();
    expect(run.status).toBe('completed');
    expect(result.text).toBe('The command was too slow.');

    const seen = toolContents(t.fake.requests[1]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain('toolTimeoutMs');
    expect(seen[0]).toContain('300 ms');

    const events = await runEvents(t, id, runId);
    const end = ofType(events, 'tool_end')[0];
    expect(end.payload).toMatchObject({ id: 'slow', name: 'bash', exit_code: 1 });

    const pid = Number(readFileSync(join(t.root, 'sleep.pid'), 'utf8'));
    // $! is a pid of the sandbox's PID namespace: the host's process table is scanned for the command instead.
    await eventually(() => hostProcessesWith('sleep 20.417').length === 0, `sleep (pid ${pid}) to be killed`);
  });

  it('a tool that keeps printing after its timeout emits no tool_output_delta after its tool_end', async () => {
    const t = await server();
    const id = await createSession(t, { toolTimeoutMs: 500 });
    const command = "trap 'echo late; touch done; exit 0' TERM; echo early; sleep 5 & wait";
    t.fake.script({ toolCalls: [{ id: 'chatty', name: 'bash', arguments: { command } }] }, { text: 'ok' });
    const { run, runId } = await runAndWait(t, id, 'go');
    t.fake.assertDone();
    expect(run.status).toBe('completed');
    await eventually(() => existsSync(join(t.root, 'done')), 'the TERM trap to run');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const events = await runEvents(t, id, runId);
    const endIndex = events.findIndex((e) => e.type === 'tool_end' && e.payload.id === 'chatty');
    expect(endIndex).toBeGreaterThan(-1);
    const early = events.findIndex((e) => e.type === 'tool_output_delta' && e.payload.delta === 'early\n');
    expect(early).toBeGreaterThan(-1);
    expect(early).toBeLessThan(endIndex);
    expect(events.slice(endIndex).filter((e) => e.type === 'tool_output_delta')).toEqual([]);
    expect(events[events.length - 1].type).toBe('agent_end');
  });

  it('tool output over 100 KiB is cut in the transcript and the full output is served as an artifact', async () => {
    const t = await server();
    const id = await createSession(t);
    const line = `${'a'.repeat(99)}\n`;
    const expected = line.repeat(3000);
    t.fake.script(
      { toolCalls: [{ id: 'big', name: 'bash', arguments: { command: `yes ${'a'.repeat(99)} | head -n 3000` } }] },
      { text: 'That was a lot.' },
    );
    const { run, runId } = await runAndWait(t, id, 'flood');
    t.fake.assertDone();
    expect(run.status).toBe('completed');

    const messages = await history(t, id);
    const tool = messages.find((m) => m.role === 'tool');
    const content = String(tool?.content);
    expect(Buffer.byteLength(content)).toBeLessThan(102_400 + 500);
    expect(content.startsWith(line.repeat(10))).toBe(true);
    const match = /full output stored as artifact (\S+?)\]/.exec(content);
    expect(match, content.slice(-300)).not.toBeNull();
    const artifactId = match?.[1] ?? '';
    expect(content).toContain('102400');

    // The model saw the same cut output.
    expect(toolContents(t.fake.requests[1])).toEqual([content]);

    const events = await runEvents(t, id, runId);
    const end = ofType(events, 'tool_end')[0];
    expect(end.payload).toMatchObject({ id: 'big', truncated: true, artifact_id: artifactId, exit_code: 0 });

    const artifact = await request(t.url).get(`/v1/sessions/${id}/artifacts/${artifactId}`).expect(200);
    expect(artifact.body.artifact).toMatchObject({ id: artifactId, toolCallId: 'big', toolName: 'bash' });
    expect(artifact.body.artifact.content).toBe(expected);
    await request(t.url).get(`/v1/sessions/${id}/artifacts/art_missing`).expect(404);
  });

  it('a large file written then read is cut the same way', async () => {
    const t = await server();
    const id = await createSession(t);
    const body = Array.from({ length: 1500 }, (_, i) => `line ${String(i).padStart(4, '0')} ${'x'.repeat(190)}`).join(
      '\n',
    );
    t.fake.script(
      { toolCalls: [{ id: 'w', name: 'write', arguments: { file_path: 'big.txt', content: body } }] },
      { toolCalls: [{ id: 'r', name: 'read', arguments: { file_path: 'big.txt', limit: 2000 } }] },
      { text: 'Read it.' },
    );
    const { run, runId } = await runAndWait(t, id, 'write and read');
    t.fake.assertDone();
    expect(run.status).toBe('completed');
    expect(readFileSync(join(t.root, 'big.txt'), 'utf8')).toBe(body);
    const events = await runEvents(t, id, runId);
    const readEnd = ofType(events, 'tool_end').find((e) => e.payload.id === 'r');
    expect(readEnd?.payload.truncated).toBe(true);
    const artifactId = String(readEnd?.payload.artifact_id);
    const artifact = await request(t.url).get(`/v1/sessions/${id}/artifacts/${artifactId}`).expect(200);
    const full = String(artifact.body.artifact.content);
    expect(Buffer.byteLength(full)).toBeGreaterThan(290_000);
    expect(full).toContain('line 1499');
    expect(String(readEnd?.payload.output)).not.toContain('line 1499');
  });

  it('bash output lines arrive as tool_output_delta events before tool_end', async () => {
    const t = await server();
    const id = await createSession(t);
    t.fake.script(
      { toolCalls: [{ id: 'lines', name: 'bash', arguments: { command: "printf 'one\\ntwo\\n'; echo three >&2" } }] },
      { text: 'ok' },
    );
    const { runId } = await runAndWait(t, id, 'print');
    t.fake.assertDone();
    const events = await runEvents(t, id, runId);
    const deltas = ofType(events, 'tool_output_delta');
    expect(deltas.every((e) => e.payload.id === 'lines' && e.payload.name === 'bash')).toBe(true);
    expect(deltas.map((e) => e.payload.delta).sort()).toEqual(['one\n', 'three\n', 'two\n']);
    const endSeq = ofType(events, 'tool_end')[0].metadata.sequence ?? -1;
    for (const d of deltas) expect(d.metadata.sequence ?? Infinity).toBeLessThan(endSeq);
    expect(toolContents(t.fake.requests[1])[0]).toContain('one\ntwo\n');
  });

  it('reasoning deltas reach reasoning_delta events and the transcript, but are not sent back to the provider', async () => {
    const t = await server();
    const id = await createSession(t);
    t.fake.script(
      { reasoning: 'Let me think about it.', text: 'Answer one.' },
      { reasoning: 'Other field.', reasoningField: 'reasoning', text: 'Answer two.' },
    );
    const first = await runAndWait(t, id, 'q1');
    const second = await runAndWait(t, id, 'q2');
    t.fake.assertDone();
    expect(
      ofType(await runEvents(t, id, first.runId), 'reasoning_delta')
        .map((e) => e.payload.text)
        .join(''),
    ).toBe('Let me think about it.');
    expect(
      ofType(await runEvents(t, id, second.runId), 'reasoning_delta')
        .map((e) => e.payload.text)
        .join(''),
    ).toBe('Other field.');
    const messages = await history(t, id);
    expect(messages.filter((m) => m.role === 'assistant').map((m) => m.reasoning)).toEqual([
      'Let me think about it.',
      'Other field.',
    ]);
    const resent = t.fake.requests[1].body.messages.find((m) => m.role === 'assistant');
    expect(resent).toBeDefined();
    expect(resent?.reasoning).toBeUndefined();
    expect(resent?.reasoning_content).toBeUndefined();
  });

  it('many tool calls in one run leave no abort listeners behind (no MaxListenersExceededWarning)', async () => {
    const files = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`f${i}.txt`, `file ${i}\n`]));
    const t = await server({ files });
    const id = await createSession(t);
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => {
      if (warning.name === 'MaxListenersExceededWarning') warnings.push(warning);
    };
    process.on('warning', onWarning);
    try {
      t.fake.script(
        {
          toolCalls: Array.from({ length: 15 }, (_, i) => ({
            id: `c${i}`,
            name: 'read',
            arguments: { file_path: `f${i}.txt` },
          })),
        },
        {
          toolCalls: Array.from({ length: 15 }, (_, i) => ({
            id: `d${i}`,
            name: 'bash',
            arguments: { command: `echo ${i}` },
          })),
        },
        // Many turns too: every provider call must drop its link to the run's signal when it ends.
        ...Array.from({ length: 12 }, (_, i) => ({
          toolCalls: [{ id: `e${i}`, name: 'ls', arguments: { path: i % 2 === 0 ? '.' : './' } }],
        })),
        { text: 'Read them all.' },
      );
      const { run, result } = await runAndWait(t, id, 'read all');
      t.fake.assertDone();
      expect(run.status).toBe('completed');
      expect(result.toolCallsCount).toBe(42);
      expect(t.fake.requests).toHaveLength(15);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => w.message)).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
