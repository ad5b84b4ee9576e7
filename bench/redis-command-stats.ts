import { Redis } from 'ioredis';
import { round } from './bench-stats.js';

/** The INFO sections one counter reading asks for, in one command per node. */
const INFO_SECTIONS = ['stats', 'commandstats', 'memory', 'replication', 'keyspace', 'cpu'] as const;

/** What one Redis node reported in one `INFO` call. */
export interface RedisNodeCounters {
  /** "127.0.0.1:port". */
  address: string;
  role: 'master' | 'replica';
  /** `INFO commandstats` calls per command name (`evalsha`, `client|setname`, ...), commands run inside scripts included. */
  calls: Record<string, number>;
  /** total_net_input_bytes: bytes the node read from its clients (replication excluded). */
  netInputBytes: number;
  /** total_net_output_bytes: bytes the node wrote to its clients and (on Redis 7.0) to its replicas. */
  netOutputBytes: number;
  /** total_net_repl_output_bytes: bytes a master wrote to its replicas. */
  replOutputBytes: number;
  /** used_memory. */
  usedMemory: number;
  /** Keys in db0. */
  keys: number;
  /** used_cpu_user + used_cpu_sys: CPU seconds the node has used. */
  cpuSeconds: number;
  /** Bytes of the reply to this INFO call as the node wrote it (RESP bulk string). */
  replyBytes: number;
}

/** Redis work over an interval, summed over the masters, the probe's own INFO calls taken out. */
export interface RedisUsage {
  /** Commands the masters executed (INFO commandstats calls; a script counts once, plus once per command it runs). */
  commands: number;
  /** The same per command name, largest first. */
  byCommand: Record<string, number>;
  /** Bytes the masters read from their clients (what the server sent to Redis). */
  bytesIn: number;
  /** Bytes the masters wrote to their clients (what the server received from Redis), replication taken out. */
  bytesOut: number;
  /** Bytes the masters wrote to their replicas (replication stream). */
  replBytesOut: number;
  /** Change of used_memory, summed over the masters. */
  usedMemoryDelta: number;
  /** Change of the number of keys, summed over the masters. */
  keysDelta: number;
  /** CPU seconds the masters used (user + system), their INFO calls included. */
  cpuSeconds: number;
}

/** What the masters executed while RedisCounterProbe.monitor ran its work. */
export interface MonitorCounts {
  /** Commands clients sent (requests on the wire; a MULTI/EXEC block counts each command). */
  sent: number;
  /** The same per command name, largest first. */
  sentByCommand: Record<string, number>;
  /** Commands Lua scripts ran (MONITOR source "lua"). */
  inScripts: number;
}

/** A plain connection to every node of a Redis deployment (one Redis, or each node of a cluster) to read its counters. */
export class RedisCounterProbe {
  private constructor(private readonly nodes: ReadonlyArray<{ address: string; client: Redis }>) {}

  /** Connects to each "host:port" (no ready check, so connecting sends no command the deltas would see). */
  static async open(addresses: readonly string[]): Promise<RedisCounterProbe> {
    const nodes = addresses.map((address) => {
      const [host, port] = splitAddress(address);
      return {
        address,
        client: new Redis({ host, port, lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 1 }),
      };
    });
    await Promise.all(nodes.map((node) => node.client.connect()));
    return new RedisCounterProbe(nodes);
  }

  /** One INFO call per node, in parallel. */
  async read(): Promise<RedisNodeCounters[]> {
    return Promise.all(
      this.nodes.map(async ({ address, client }) => parseCounters(address, await client.info(...INFO_SECTIONS))),
    );
  }

  /** The approximate bytes the given keys hold (`MEMORY USAGE key SAMPLES 0`) for every key matching `pattern` on every master. */
  async memoryUsage(pattern: string): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const { client } of this.nodes) {
      if (!(await client.info('replication')).includes('role:master')) continue;
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) {
          const bytes = (await client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) as number | null;
          if (typeof bytes === 'number') out[key] = bytes;
        }
      } while (cursor !== '0');
    }
    return out;
  }

  /**
   * Runs `work` with a MONITOR connection on every master and counts what they executed meanwhile, split
   * into the commands clients sent (per name) and the commands scripts ran; the probe's own MONITOR and
   * the commands of other clients of the nodes (none in the bench) are counted too.
   */
  async monitor(work: () => Promise<void>): Promise<MonitorCounts> {
    const counts: MonitorCounts = { sent: 0, sentByCommand: {}, inScripts: 0 };
    const monitors: Redis[] = [];
    try {
      for (const { client } of this.nodes) {
        if (!(await client.info('replication')).includes('role:master')) continue;
        const monitor = await client.monitor();
        monitors.push(monitor);
        monitor.on('monitor', (_time: string, args: string[], source: string) => {
          if (source === 'lua') {
            counts.inScripts += 1;
            return;
          }
          const name = (args[0] ?? '').toLowerCase();
          counts.sent += 1;
          counts.sentByCommand[name] = (counts.sentByCommand[name] ?? 0) + 1;
        });
      }
      await work();
      // Let the last commands' MONITOR lines arrive.
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      for (const monitor of monitors) monitor.disconnect();
    }
    counts.sentByCommand = Object.fromEntries(Object.entries(counts.sentByCommand).sort((a, b) => b[1] - a[1]));
    return counts;
  }

  /** Closes every connection. */
  close(): void {
    for (const { client } of this.nodes) client.disconnect();
  }
}

/**
 * The masters' work between two readings of the same nodes (roles as in `before`). Each interval holds
 * exactly one of the probe's INFO calls per node in commandstats (the reading that opened it; a command is
 * counted after it runs), the reply bytes of that call, and the request bytes of the closing call (input is
 * counted as it is read), so those are subtracted; so are the replicas' own commands (REPLCONF ACK; their
 * few input bytes, ~40 per replica per second, stay in).
 */
export function redisUsageBetween(
  before: readonly RedisNodeCounters[],
  after: readonly RedisNodeCounters[],
): RedisUsage {
  const byCommand: Record<string, number> = {};
  const usage: RedisUsage = {
    commands: 0,
    byCommand,
    bytesIn: 0,
    bytesOut: 0,
    replBytesOut: 0,
    usedMemoryDelta: 0,
    keysDelta: 0,
    cpuSeconds: 0,
  };
  for (const start of before) {
    if (start.role !== 'master') continue;
    const end = after.find((node) => node.address === start.address);
    if (end === undefined) continue;
    const names = new Set([...Object.keys(start.calls), ...Object.keys(end.calls)]);
    for (const name of names) {
      if (REPLICA_COMMANDS.has(name)) continue;
      const delta = (end.calls[name] ?? 0) - (start.calls[name] ?? 0) - (name === 'info' ? 1 : 0);
      if (delta > 0) byCommand[name] = (byCommand[name] ?? 0) + delta;
    }
    usage.bytesIn += end.netInputBytes - start.netInputBytes - INFO_REQUEST_BYTES;
    // total_net_output_bytes counts what a master writes to its replicas too (checked on Redis 7.0.15).
    const replOut = end.replOutputBytes - start.replOutputBytes;
    usage.bytesOut += Math.max(0, end.netOutputBytes - start.netOutputBytes - replOut - start.replyBytes);
    usage.replBytesOut += replOut;
    usage.usedMemoryDelta += end.usedMemory - start.usedMemory;
    usage.keysDelta += end.keys - start.keys;
    usage.cpuSeconds += end.cpuSeconds - start.cpuSeconds;
  }
  const sorted = Object.entries(byCommand).sort((a, b) => b[1] - a[1]);
  usage.byCommand = Object.fromEntries(sorted);
  usage.commands = sorted.reduce((sum, [, calls]) => sum + calls, 0);
  return usage;
}

/** The bench's JSON form of a RedisUsage per run: `{commands, by_command, bytes_in, bytes_out, repl_bytes_out, cpu_ms}`. */
export function redisPerRun(usage: RedisUsage, runs: number): Record<string, unknown> | null {
  if (runs <= 0) return null;
  const per = (value: number, digits = 1): number => round(value / runs, digits);
  return {
    commands: per(usage.commands),
    by_command: Object.fromEntries(Object.entries(usage.byCommand).map(([name, calls]) => [name, per(calls, 2)])),
    bytes_in: Math.round(usage.bytesIn / runs),
    bytes_out: Math.round(usage.bytesOut / runs),
    repl_bytes_out: Math.round(usage.replBytesOut / runs),
    cpu_ms: round((usage.cpuSeconds * 1000) / runs, 3),
  };
}

/** Commands a master's replicas send it (REPLCONF ACK every second, the sync handshake): not the server's. */
const REPLICA_COMMANDS: ReadonlySet<string> = new Set(['replconf', 'psync', 'sync']);

/** The RESP request `INFO stats commandstats ...` as the client writes it (what the node counts as input). */
const INFO_REQUEST_BYTES = respArrayBytes(['info', ...INFO_SECTIONS]);

function respArrayBytes(args: readonly string[]): number {
  let bytes = `*${args.length}\r\n`.length;
  for (const arg of args) bytes += `$${Buffer.byteLength(arg)}\r\n`.length + Buffer.byteLength(arg) + 2;
  return bytes;
}

/** Parses an INFO reply into counters. */
export function parseCounters(address: string, info: string): RedisNodeCounters {
  const fields = new Map<string, string>();
  const calls: Record<string, number> = {};
  for (const line of info.split('\r\n')) {
    const colon = line.indexOf(':');
    if (line.startsWith('#') || colon < 0) continue;
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1);
    if (name.startsWith('cmdstat_')) {
      const count = /(?:^|,)calls=(\d+)/.exec(value);
      if (count?.[1] !== undefined) calls[name.slice('cmdstat_'.length)] = Number(count[1]);
    } else {
      fields.set(name, value);
    }
  }
  const number = (name: string): number => {
    const value = Number(fields.get(name));
    if (!Number.isFinite(value)) throw new Error(`redis ${address}: INFO has no numeric ${name}`);
    return value;
  };
  const keys = /(?:^|,)keys=(\d+)/.exec(fields.get('db0') ?? '');
  const bodyBytes = Buffer.byteLength(info);
  return {
    address,
    role: fields.get('role') === 'master' ? 'master' : 'replica',
    calls,
    netInputBytes: number('total_net_input_bytes'),
    netOutputBytes: number('total_net_output_bytes'),
    replOutputBytes: fields.has('total_net_repl_output_bytes') ? number('total_net_repl_output_bytes') : 0,
    usedMemory: number('used_memory'),
    keys: keys?.[1] === undefined ? 0 : Number(keys[1]),
    cpuSeconds: number('used_cpu_user') + number('used_cpu_sys'),
    replyBytes: `$${bodyBytes}\r\n`.length + bodyBytes + 2,
  };
}

function splitAddress(address: string): [string, number] {
  const url = address.includes('://') ? new URL(address) : new URL(`redis://${address}`);
  return [url.hostname, Number(url.port || 6379)];
}
