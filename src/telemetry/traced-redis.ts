import type { Cluster, Redis } from 'ioredis';
import type { Telemetry } from '../runtime/ports/telemetry.js';

/** The part of an ioredis command a span reads: its name, its keys and when it is answered. */
interface SentCommand {
  readonly name: string;
  readonly promise: Promise<unknown>;
  getKeys(): unknown[];
}

/**
 * Spans of the Redis commands a traced run sends (docs/operations.md "Traces"): `redis <COMMAND>`, a client span
 * child of the span active where the command was sent (a run's, a tool call's), with `db.system.name`,
 * `db.operation.name` and the number of keys only: never a key, an argument or a reply. A command sent outside a
 * traced run (lease renewals, the stream followers) gets none. A pipeline's or transaction's commands get one span
 * each (`a3s.redis.pipelined`), all of the same round trip.
 */
export function traceRedis(client: Redis | Cluster, telemetry: Telemetry): void {
  const send = client.sendCommand.bind(client) as (command: SentCommand, ...rest: unknown[]) => unknown;
  const traced = (command: SentCommand, ...rest: unknown[]): unknown => {
    const active = telemetry.active();
    if (active === undefined) return send(command, ...rest);
    const name = command.name.toUpperCase();
    const span = active.child(
      `redis ${name}`,
      {
        'db.system.name': 'redis',
        'db.operation.name': name,
        'a3s.redis.keys': command.getKeys().length,
        'a3s.redis.pipelined': (command as { pipelineIndex?: number }).pipelineIndex !== undefined,
      },
      'client',
    );
    command.promise.then(
      () => span.end(),
      (error: unknown) => {
        span.fail(error instanceof Error ? error.name : 'error');
        span.end();
      },
    );
    return send(command, ...rest);
  };
  (client as unknown as { sendCommand: typeof traced }).sendCommand = traced;
}
