import { describe, expect, it } from 'vitest';
import {
  HOOK_EVENTS,
  HookRegistrationSchema,
  HookResponseSchema,
  isGatingHookEvent,
  isObservingHookEvent,
} from '../../src/protocol/hooks.js';
import { HookPayloadSchemas } from '../../src/protocol/hook-payloads.js';
import { validationError } from '../../src/server/route.js';

const url = 'https://hooks.example.com/a3s';

function firstError(value: unknown): string {
  const result = HookRegistrationSchema.safeParse(value);
  if (result.success) throw new Error('expected a validation error');
  return validationError('body', result.error).message;
}

describe('HookRegistrationSchema', () => {
  it('applies defaults', () => {
    expect(HookRegistrationSchema.parse({ event: 'pre_tool_use', endpoint: { type: 'webhook', url } })).toEqual({
      event: 'pre_tool_use',
      priority: 100,
      timeoutMs: 30_000,
      asyncExecution: false,
      maxRetries: 0,
      endpoint: { type: 'webhook', url },
    });
  });

  it.each([
    [{ endpoint: { type: 'webhook', url } }, /^body\.event: /],
    [{ event: 'pre_everything', endpoint: { type: 'webhook', url } }, /^body\.event: /],
    [{ event: 'pre_tool_use' }, /^body\.endpoint: /],
    [{ event: 'pre_tool_use', endpoint: { type: 'carrier_pigeon' } }, /^body\.endpoint\.type: /],
    [
      { event: 'pre_tool_use', endpoint: { type: 'webhook', url: 'ftp://x/' } },
      /^body\.endpoint\.url: url must be an absolute http/,
    ],
    [{ event: 'pre_tool_use', endpoint: { type: 'webhook', url: 'file:///etc/passwd' } }, /^body\.endpoint\.url: /],
    [
      { event: 'pre_tool_use', endpoint: { type: 'webhook', url: 'https://user:pw@x.example/' } },
      /^body\.endpoint\.url: .*user:password/,
    ],
    [{ event: 'pre_tool_use', endpoint: { type: 'webhook', url: 'not a url' } }, /^body\.endpoint\.url: /],
    [
      { event: 'pre_tool_use', endpoint: { type: 'webhook', url, headers: { 'Bad Header': 'x' } } },
      /^body\.endpoint\.headers\.Bad Header: /,
    ],
    [
      { event: 'pre_tool_use', endpoint: { type: 'webhook', url, headers: { 'X-Evil': 'a\r\nInjected: 1' } } },
      /^body\.endpoint\.headers\.X-Evil: header values must not contain CR/,
    ],
    [
      { event: 'pre_tool_use', endpoint: { type: 'webhook', url, headers: { Host: 'x' } } },
      /^body\.endpoint\.headers\.Host: /,
    ],
    [{ event: 'pre_tool_use', endpoint: { type: 'webhook', url, extra: 1 } }, /^body\.endpoint\.extra: /],
    [{ event: 'pre_tool_use', endpoint: { type: 'websocket', connectionId: '' } }, /^body\.endpoint\.connectionId: /],
    [{ event: 'pre_tool_use', timeoutMs: 60_001, endpoint: { type: 'webhook', url } }, /^body\.timeoutMs: /],
    [{ event: 'pre_tool_use', timeoutMs: 0, endpoint: { type: 'webhook', url } }, /^body\.timeoutMs: /],
    [{ event: 'pre_tool_use', priority: 1.5, endpoint: { type: 'webhook', url } }, /^body\.priority: /],
    [
      { event: 'pre_tool_use', matcher: { tool: 'bash', regex: '.*' }, endpoint: { type: 'webhook', url } },
      /^body\.matcher\.regex: /,
    ],
    [
      { event: 'pre_tool_use', matcher: { pathPattern: '' }, endpoint: { type: 'webhook', url } },
      /^body\.matcher\.pathPattern: /,
    ],
    [{ id: '../x', event: 'pre_tool_use', endpoint: { type: 'webhook', url } }, /^body\.id: id must be/],
    [{ event: 'pre_tool_use', endpoint: { type: 'webhook', url }, async: true }, /^body\.async: /],
  ])('%j -> %s', (body, message) => {
    expect(firstError(body)).toMatch(message);
  });

  it('bounds webhook headers', () => {
    const headers = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`X-H${i}`, 'v']));
    expect(firstError({ event: 'pre_tool_use', endpoint: { type: 'webhook', url, headers } })).toMatch(
      /^body\.endpoint\.headers: at most 32 headers/,
    );
  });
});

describe('hook answers and events', () => {
  it('parses answers leniently but requires a known action', () => {
    expect(HookResponseSchema.parse({ action: 'continue', modified: { a: 1 }, extra: true })).toEqual({
      action: 'continue',
      modified: { a: 1 },
    });
    expect(HookResponseSchema.safeParse({ action: 'allow' }).success).toBe(false);
    expect(HookResponseSchema.safeParse({ action: 'continue', modified: [1] }).success).toBe(false);
  });

  it('splits events into gating and observing', () => {
    expect(
      ['pre_tool_use', 'permission_request', 'pre_prompt', 'pre_compact', 'pre_planning'].every(isGatingHookEvent),
    ).toBe(true);
    expect(
      [
        'post_tool_use',
        'generate_start',
        'generate_end',
        'session_start',
        'session_end',
        'on_error',
        'post_compact',
        'skill_load',
        'skill_unload',
        'post_response',
        'pre_context_perception',
        'post_context_perception',
        'on_success',
        'pre_memory_recall',
        'post_memory_recall',
        'post_planning',
        'pre_reasoning',
        'post_reasoning',
        'on_rate_limit',
        'on_confirmation',
        'intent_detection',
        'budget_threshold_hit',
        'passivation_requested',
        'peer_invocation',
      ].every(isObservingHookEvent),
    ).toBe(true);
    expect(isObservingHookEvent('pre_tool_use')).toBe(false);
    expect(isObservingHookEvent('made_up')).toBe(false);
    // The seed's 26 events (SEED-REFERENCE §8) and our three cluster events, each with its payload schema.
    expect(Object.keys(HookPayloadSchemas)).toHaveLength(29);
    expect(Object.keys(HookPayloadSchemas).sort()).toEqual([...HOOK_EVENTS].sort());
    expect(
      HookPayloadSchemas.post_tool_use.safeParse({
        session_id: 's',
        tool: 'bash',
        args: {},
        result: { output: '', exit_code: 0 },
        origin: 'model',
      }).success,
    ).toBe(true);
  });
});
