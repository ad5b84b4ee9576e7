import { createHash } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { SEED_EVENT_PAYLOADS } from '../../src/protocol/seed-event-payloads.js';
import type { EventEnvelope } from '../../src/protocol/event-envelope.js';
import { createSession, runAndWait, runEvents, useTestServers } from '../support/run-helpers.js';

const start = useTestServers();
const sha256 = (text: string): string => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
const ofType = (events: EventEnvelope[], type: string) => events.filter((event) => event.type === type);

describe('evidence-binding events (the seed events 8 and 24-27)', () => {
  it('bind the run capability, each model call and each tool request, with digests of what was sent', async () => {
    const t = await start({ files: { 'notes.txt': 'alpha\nbeta\n' } });
    t.fake.script(
      { toolCalls: [{ id: 'c1', name: 'read', arguments: { file_path: 'notes.txt' } }] },
      { text: 'Both lines are there.', usage: { prompt_tokens: 40, completion_tokens: 6 } },
    );
    const sessionId = await createSession(t, { workspace: t.root });
    const { runId } = await runAndWait(t, sessionId, 'read notes.txt');
    const events = await runEvents(t, sessionId, runId);
    const types = events.map((event) => event.type);
    // Every payload parses with its registered schema.
    for (const event of events) {
      const schema = (SEED_EVENT_PAYLOADS as Record<string, { parse(value: unknown): unknown }>)[event.type];
      if (schema) schema.parse(event.payload);
    }

    const [capability] = ofType(events, 'run_capability_bound');
    expect(ofType(events, 'run_capability_bound')).toHaveLength(1);
    const capabilityPayload = capability.payload as {
      call_sequence: number;
      snapshot: { tools: string[]; tools_digest: string; model: string; max_tool_rounds: number };
    };
    expect(capabilityPayload.call_sequence).toBe(0);
    expect(types.indexOf('run_capability_bound')).toBeLessThan(types.indexOf('turn_start'));
    const sentTools = (t.fake.requests[0].body.tools ?? []).map(
      (tool) => (tool as { function: { name: string } }).function.name,
    );
    expect(capabilityPayload.snapshot.tools).toEqual(sentTools);
    expect(capabilityPayload.snapshot.tools_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(capabilityPayload.snapshot.max_tool_rounds).toBeGreaterThan(0);

    const presentations = ofType(events, 'model_presentation_bound').map(
      (event) => event.payload as { snapshot: { call_sequence: number; tools: string[]; tools_digest: string } },
    );
    expect(presentations.map((p) => p.snapshot.call_sequence)).toEqual([1, 2]);
    for (const p of presentations) {
      expect(p.snapshot.tools).toEqual(sentTools);
      expect(p.snapshot.tools_digest).toBe(capabilityPayload.snapshot.tools_digest);
    }

    // model_input_bound digests exactly the body the provider received.
    const inputs = ofType(events, 'model_input_bound').map(
      (event) =>
        event.payload as {
          snapshot: { call_sequence: number; input_digest: string; input_bytes: number; message_count: number };
        },
    );
    expect(inputs).toHaveLength(2);
    inputs.forEach((input, i) => {
      const received = t.fake.requests[i];
      expect(input.snapshot.call_sequence).toBe(i + 1);
      expect(input.snapshot.input_digest).toBe(sha256(received.raw));
      expect(input.snapshot.input_bytes).toBe(Buffer.byteLength(received.raw));
      expect(input.snapshot.message_count).toBe(received.body.messages.length);
    });
    expect(inputs[0].snapshot.input_digest).not.toBe(inputs[1].snapshot.input_digest);

    const usages = ofType(events, 'model_usage_bound').map(
      (event) =>
        event.payload as {
          snapshot: {
            call_sequence: number;
            reported_total_tokens: number;
            tool_results: { total_count: number; unique_count: number };
          };
        },
    );
    expect(usages.map((u) => u.snapshot.call_sequence)).toEqual([1, 2]);
    expect(usages[1].snapshot.reported_total_tokens).toBe(46);
    expect(usages[0].snapshot.tool_results).toEqual({ total_count: 0, unique_count: 0 });
    expect(usages[1].snapshot.tool_results).toEqual({ total_count: 1, unique_count: 1 });

    // tool_request_bound: after the call is announced, before it runs; the digest binds the validated args.
    const [bound] = ofType(events, 'tool_request_bound');
    const boundPayload = bound.payload as {
      tool_id: string;
      tool_name: string;
      snapshot: { version: number; origin: string; args_digest: string; args_bytes: number };
    };
    expect(boundPayload).toMatchObject({ tool_id: 'c1', tool_name: 'read', snapshot: { version: 1, origin: 'model' } });
    const argsJson = JSON.stringify({ file_path: 'notes.txt' });
    expect(boundPayload.snapshot.args_digest).toBe(sha256(argsJson));
    expect(boundPayload.snapshot.args_bytes).toBe(argsJson.length);
    expect(types.indexOf('tool_start')).toBeLessThan(types.indexOf('tool_request_bound'));
    expect(types.indexOf('tool_request_bound')).toBeLessThan(types.indexOf('tool_execution_start'));
    // The order of one model call: presentation, input, then the streamed answer, then usage.
    const firstTurn = types.slice(types.indexOf('turn_start'), types.indexOf('turn_end'));
    expect(firstTurn.indexOf('model_presentation_bound')).toBeLessThan(firstTurn.indexOf('model_input_bound'));
    expect(firstTurn.indexOf('model_input_bound')).toBeLessThan(firstTurn.indexOf('tool_start'));
    expect(firstTurn.at(-1)).toBe('model_usage_bound');
    t.fake.assertDone();
  });

  it('binds a denied tool request too, and a host-direct call with its origin', async () => {
    const t = await start({ files: { 'a.txt': 'x\n' } });
    const sessionId = await createSession(t, {
      workspace: t.root,
      permissionPolicy: { deny: ['read(a.txt)'], defaultDecision: 'allow' },
    });
    t.fake.script(
      { toolCalls: [{ id: 'd1', name: 'read', arguments: { file_path: 'a.txt' } }] },
      { text: 'It was denied.' },
    );
    const { runId } = await runAndWait(t, sessionId, 'read a.txt');
    const events = await runEvents(t, sessionId, runId);
    const types = events.map((event) => event.type);
    expect(types).toContain('permission_denied');
    expect(types.indexOf('tool_request_bound')).toBeLessThan(types.indexOf('permission_denied'));
    expect(types).not.toContain('tool_execution_start');

    // An invalid call is not bound: validation failed before binding.
    t.fake.script(
      { toolCalls: [{ id: 'i1', name: 'read', arguments: { nope: 1 } }] },
      { text: 'Invalid call answered.' },
    );
    const second = await runAndWait(t, sessionId, 'try again');
    const secondEvents = await runEvents(t, sessionId, second.runId);
    expect(ofType(secondEvents, 'tool_request_bound')).toHaveLength(0);
    expect(ofType(secondEvents, 'model_input_bound')).toHaveLength(2);

    // A governed direct call (no run) is bound with its origin.
    await request(t.url)
      .post(`/v1/sessions/${sessionId}/tools/read/governed`)
      .send({ args: { file_path: 'a.txt' } })
      .expect(200);
    const trace = await request(t.url).get(`/v1/sessions/${sessionId}/trace`).query({ limit: 1000 }).expect(200);
    const direct = ofType(trace.body.events as EventEnvelope[], 'tool_request_bound').map(
      (event) => event.payload as { snapshot: { origin: string } },
    );
    expect(direct.map((payload) => payload.snapshot.origin)).toEqual(['model', 'governed_direct']);
    t.fake.assertDone();
  });
});
