import { expect } from 'vitest';
import type { HookFailure } from '../../src/runtime/policy/hooks/hook-outcome.js';
import { HostBridgeError } from '../../src/runtime/policy/host-bridge/host-bridge-error.js';
import { HookEngine, type HookEngineOptions } from '../../src/runtime/policy/hooks/hook-engine.js';
import { WebSocketHostRegistry } from '../../src/runtime/policy/host-bridge/websocket-host-registry.js';

/** A deterministic id generator: `<prefix>-1`, `<prefix>-2`, ... */
export function sequentialIds(): (prefix: string) => string {
  let n = 0;
  return (prefix) => `${prefix}-${++n}`;
}

/** A HookEngine with a fresh registry, the real clock and sequential ids; failures are collected. */
export function makeEngine(overrides: Partial<HookEngineOptions> = {}): {
  engine: HookEngine;
  registry: WebSocketHostRegistry;
  failures: HookFailure[];
} {
  const failures: HookFailure[] = [];
  const registry = overrides.registry ?? new WebSocketHostRegistry();
  const engine = new HookEngine({
    registry,
    now: () => Date.now(),
    newId: sequentialIds(),
    onError: (f) => failures.push(f),
    ...overrides,
  });
  return { engine, registry, failures };
}

/** The pre_tool_use payload the tool invoker sends. */
export function toolPayload(tool: string, args: Record<string, unknown>, sessionId = 's1'): Record<string, unknown> {
  return { session_id: sessionId, tool, args };
}

/** The HostBridgeError a promise rejects with (fails the test when it resolves or rejects otherwise). */
export async function hostFailure(promise: Promise<unknown>): Promise<HostBridgeError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HostBridgeError);
  return error as HostBridgeError;
}
