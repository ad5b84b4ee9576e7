import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as api from '../../src/client/index.js';
import { ERROR_CATALOGUE, RUN_ERROR_CATALOGUE } from '../../src/errors.js';
import { SEED_EVENT_TYPES } from '../../src/protocol/event-catalog.js';

describe('typed errors generated from the catalogue, event helpers, and a browser-safe module graph', () => {
  it('every catalogue code has a named class (SESSION_BUSY -> SessionBusyError) that errorClassFor finds', () => {
    const codes = [
      ...Object.keys(ERROR_CATALOGUE),
      ...Object.keys(RUN_ERROR_CATALOGUE),
      ...Object.keys(api.CLIENT_ERROR_CATALOGUE),
    ];
    const exported = api as unknown as Record<string, unknown>;
    for (const code of codes) {
      const name = api.errorClassName(code);
      const cls = exported[name] as api.A3sErrorClass;
      expect(cls, name).toBeTypeOf('function');
      expect(api.errorClassFor(code)).toBe(cls);
      const error = new cls('boom');
      expect(error).toBeInstanceOf(api.A3sError);
      expect(error).toMatchObject({ code, name, message: 'boom' });
      expect(error.status).toBe(
        code in ERROR_CATALOGUE ? ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE].status : 0,
      );
    }
    expect(api.errorClassName('SESSION_BUSY')).toBe('SessionBusyError');
    expect(api.errorClassName('VALIDATION_ERROR')).toBe('ValidationError');
    expect(api.errorClassFor('SOME_FUTURE_CODE')).toBe(api.A3sError);
    const future = api.toA3sError('SOME_FUTURE_CODE', 'new', 418, { a: 1 });
    expect(future).toMatchObject({ code: 'SOME_FUTURE_CODE', status: 418, details: { a: 1 } });
    const fromBody = api.errorFromAnswer(
      409,
      { error: { code: 'SESSION_BUSY', message: 'busy', details: { runId: 'r' } } },
      'POST x',
    );
    expect(fromBody).toBeInstanceOf(api.SessionBusyError);
    expect(fromBody).toMatchObject({ status: 409, details: { runId: 'r' } });
    expect(api.errorFromAnswer(502, 'bad gateway', 'GET y')).toBeInstanceOf(api.ProtocolError);
  });

  it('agentEventTypesV1 and eventEnvelopeV1Version; unknown event types pass through the projection', () => {
    expect(api.agentEventTypesV1()).toEqual([...SEED_EVENT_TYPES]);
    expect(api.agentEventTypesV1()).toHaveLength(52);
    expect(api.eventEnvelopeV1Version()).toBe(1);
    const unknown = api.toAgentEvent({
      type: 'from_the_future',
      payload: { x: 1 },
      metadata: { session_id: 's', session_sequence: 3, timestamp_ms: 1 },
    });
    expect(unknown).toMatchObject({ version: 1, type: 'from_the_future', payload: { x: 1 }, payloadJson: '{"x":1}' });
    expect(unknown.text).toBeUndefined();
    const metadata = { session_id: 's', session_sequence: 4, timestamp_ms: 1 };
    const end = api.toAgentEvent({
      type: 'subagent_end',
      payload: { task_id: 't', session_id: 'child', agent: 'explore', output: 'done', success: false },
      metadata,
    });
    expect(end).toMatchObject({ toolId: 't', toolName: 'explore', toolOutput: 'done', exitCode: 1 });
    // A registered type whose payload is not its schema's is a ProtocolError naming the field, not a guess.
    const wrong = (() => {
      try {
        return api.toAgentEvent({
          type: 'tool_end',
          payload: { id: 'c1', name: 'bash', output: 'x', exit_code: '0', duration_ms: 1, truncated: false },
          metadata,
        });
      } catch (error) {
        return error;
      }
    })();
    expect(wrong).toBeInstanceOf(api.ProtocolError);
    expect(wrong).toMatchObject({ code: 'PROTOCOL_ERROR', details: { type: 'tool_end', field: 'payload.exit_code' } });
    expect(() =>
      api.toAgentEvent({ type: 'text_delta', payload: { text: 'a' }, metadata: { session_id: 's' } }),
    ).toThrow(/metadata\.session_sequence/);
    const gap = api.toAgentEvent({ type: 'replay_gap', payload: { requested_after: 2, first_available: 9 } });
    expect(gap).toMatchObject({
      type: 'replay_gap',
      metadata: {},
      payload: { requested_after: 2, first_available: 9 },
    });
    expect(() => api.toAgentEvent({ type: 'replay_gap', payload: { requested_after: 'x' } })).toThrow(
      api.ProtocolError,
    );
  });

  it('src/client imports nothing Node-only (no node:*, ws, fastify, runtime or server modules)', () => {
    const dir = join(import.meta.dirname, '../../src/client');
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(dir, file), 'utf8');
      const specifiers = [...text.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]);
      for (const spec of specifiers) {
        expect(
          spec.startsWith('./') || spec.startsWith('../protocol/') || spec === '../errors.js' || spec === 'zod',
          `${file} imports ${spec}`,
        ).toBe(true);
      }
      expect(text, file).not.toMatch(/\bprocess\.|\bBuffer\b|require\(/);
    }
  });
});
