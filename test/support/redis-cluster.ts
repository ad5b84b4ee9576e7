import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Cluster } from 'ioredis';
import { findFreePorts } from './free-ports.js';
import { killRedisNode, launchRedisNode, REDIS_NOT_INSTALLED, redisCommand, sleep } from './redis-node.js';

/** A throwaway local Redis Cluster (masters with replicas on 127.0.0.1), started by startRedisCluster. */
export interface RedisClusterHandle {
  /** Every node as "127.0.0.1:port", killed ones included. */
  readonly nodes: string[];
  /** The nodes comma-joined, the form REDIS_CLUSTER_NODES takes. */
  readonly seeds: string;
  /** Port of the master serving `key`'s hash slot now (CLUSTER KEYSLOT + CLUSTER SLOTS on a live node). */
  masterOf(key: string): Promise<number>;
  /** Port of a live replica of the master on `masterPort`, or undefined when it has none. */
  replicaOf(masterPort: number): Promise<number | undefined>;
  /** SIGKILL the node on `port` (a crash; without persistence its data is gone) and wait until it has exited. */
  kill(port: number): Promise<void>;
  /** Wait until every slot is served by a live master and every live node reports cluster_state:ok. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** A fresh ioredis Cluster client on the nodes, quiet about connection errors; the caller quits it. */
  connect(): Cluster;
  /** Kill every node and remove their directories; idempotent. */
  stop(): Promise<void>;
}

/** Options for startRedisCluster. */
export interface StartRedisClusterOptions {
  /** Masters (at least 3, redis-cli's minimum; default 3). */
  masters?: number;
  /** Replicas of each master (default 1). */
  replicasPerMaster?: number;
  /** cluster-node-timeout: how long a node may be unreachable before its replica takes over (default 1000 ms). */
  nodeTimeoutMs?: number;
  /** requirepass and masterauth of every node (default: none). */
  password?: string;
}

const SLOTS = 16_384;
const STARTUP_TIMEOUT_MS = 20_000;

/**
 * Start a local Redis Cluster from `redis-server` nodes on free 127.0.0.1 ports, join it with `redis-cli --cluster create`
 * and resolve once every node reports cluster_state:ok and every replica is in sync; throws with an install hint when
 * redis-server or redis-cli is missing.
 */
export async function startRedisCluster(options: StartRedisClusterOptions = {}): Promise<RedisClusterHandle> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 1;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1000;
  const password = options.password;
  const command = (port: number, args: readonly [string, ...(string | number)[]]): Promise<unknown> =>
    redisCommand(port, args, password);
  if (masters < 3) throw new Error('startRedisCluster: a Redis Cluster needs at least 3 masters');
  const dir = await mkdtemp(path.join(tmpdir(), 'a3s-redis-cluster-'));
  const children = new Map<number, ChildProcess>();
  const killOnExit = (): void => {
    for (const child of children.values()) child.kill('SIGKILL');
  };
  process.on('exit', killOnExit);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    process.off('exit', killOnExit);
    await Promise.all([...children.values()].map((child) => killRedisNode(child)));
    children.clear();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const ports = await Promise.all(
      Array.from({ length: masters * (1 + replicas) }, () => launchClusterNode(dir, nodeTimeoutMs, children, password)),
    );
    await createCluster(ports, replicas, password);
    await waitFor(
      () => clusterReady(ports, replicas, command),
      STARTUP_TIMEOUT_MS,
      'the cluster to join (cluster_state:ok, replicas in sync)',
    );
    const nodes = ports.map((port) => `127.0.0.1:${port}`);
    const live = (): number[] => [...children.keys()];
    return {
      nodes,
      seeds: nodes.join(','),
      async masterOf(key) {
        const port = firstLive(live());
        const slot = Number(await command(port, ['CLUSTER', 'KEYSLOT', key]));
        const range = (await clusterSlots(port, command)).find((entry) => entry.start <= slot && slot <= entry.end);
        if (range === undefined) throw new Error(`no master serves slot ${slot} (key ${key})`);
        return range.master;
      },
      async replicaOf(masterPort) {
        const lines = await clusterNodes(firstLive(live()), command);
        const master = lines.find((line) => line.port === masterPort);
        if (master === undefined) return undefined;
        return lines.find(
          (line) => line.masterId === master.id && !line.flags.includes('fail') && children.has(line.port),
        )?.port;
      },
      async kill(port) {
        const child = children.get(port);
        if (child === undefined) throw new Error(`no live cluster node on port ${port}`);
        children.delete(port);
        await killRedisNode(child);
      },
      waitHealthy: (timeoutMs = 20_000) =>
        waitFor(
          () => clusterHealthy(live(), command),
          timeoutMs,
          'the cluster to be healthy (every slot on a live master)',
        ),
      connect: () => connectTestCluster(nodes.join(','), password),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** An ioredis Cluster client on comma-separated "host:port" seeds for tests: quiet about connection errors (commands still reject). */
export function connectTestCluster(seeds: string, password?: string): Cluster {
  const startup = seeds.split(',').map((seed) => {
    const [host = '127.0.0.1', port = '6379'] = seed.trim().split(':');
    return { host, port: Number(port) };
  });
  const cluster = new Cluster(startup, {
    redisOptions: { maxRetriesPerRequest: 3, ...(password === undefined ? {} : { password }) },
    clusterRetryStrategy: (times) => Math.min(100 * times, 1000),
  });
  cluster.on('error', () => undefined);
  return cluster;
}

// One node on a free port with its own directory; a port found free can be taken before redis binds it, so retry.
async function launchClusterNode(
  dir: string,
  nodeTimeoutMs: number,
  children: Map<number, ChildProcess>,
  password: string | undefined,
): Promise<number> {
  for (let attempt = 1; ; attempt += 1) {
    // The cluster bus port is set explicitly: the default (port + 10000) can fall outside the port range.
    const [port, busPort] = await findFreePorts(2);
    const nodeDir = path.join(dir, String(port));
    await mkdir(nodeDir, { recursive: true });
    const args = [
      '--cluster-enabled',
      'yes',
      '--cluster-port',
      String(busPort),
      '--cluster-config-file',
      path.join(nodeDir, `nodes-${port}.conf`),
    ];
    args.push(
      '--cluster-node-timeout',
      String(nodeTimeoutMs),
      '--save',
      '',
      '--appendonly',
      'no',
      '--repl-diskless-sync-delay',
      '0',
      '--dir',
      nodeDir,
    );
    if (password !== undefined) args.push('--requirepass', password, '--masterauth', password);
    try {
      children.set(port, await launchRedisNode(port, args, password));
      return port;
    } catch (error) {
      if (attempt >= 3 || (error instanceof Error && error.message === REDIS_NOT_INSTALLED)) throw error;
    }
  }
}

async function createCluster(ports: number[], replicas: number, password: string | undefined): Promise<void> {
  const args = [
    '--cluster',
    'create',
    ...ports.map((port) => `127.0.0.1:${port}`),
    '--cluster-replicas',
    String(replicas),
    '--cluster-yes',
  ];
  if (password !== undefined) args.push('-a', password, '--no-auth-warning');
  const child = spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new Error(REDIS_NOT_INSTALLED) : error),
    );
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`redis-cli --cluster create failed (exit ${code}):\n${output}`);
}

interface SlotRange {
  start: number;
  end: number;
  master: number;
}

type NodeCommand = (port: number, args: readonly [string, ...(string | number)[]]) => Promise<unknown>;

async function clusterSlots(port: number, command: NodeCommand): Promise<SlotRange[]> {
  const reply = (await command(port, ['CLUSTER', 'SLOTS'])) as [
    number,
    number,
    [string, number, ...unknown[]],
    ...unknown[],
  ][];
  return reply.map(([start, end, master]) => ({ start, end, master: Number(master[1]) }));
}

interface NodeLine {
  id: string;
  port: number;
  flags: string[];
  masterId: string;
}

async function clusterNodes(port: number, command: NodeCommand): Promise<NodeLine[]> {
  const text = String(await command(port, ['CLUSTER', 'NODES']));
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [id = '', address = '', flags = '', masterId = ''] = line.split(' ');
      return { id, port: Number(/:(\d+)@/.exec(address)?.[1] ?? 0), flags: flags.split(','), masterId };
    });
}

async function infoField(
  port: number,
  section: string,
  field: string,
  command: NodeCommand,
): Promise<string | undefined> {
  const text = String(await command(port, ['INFO', section]));
  return new RegExp(`^${field}:(.*)$`, 'm').exec(text)?.[1]?.trim();
}

// Every node agrees the cluster is ok and every replica has finished its initial sync with its master.
async function clusterReady(ports: number[], replicas: number, command: NodeCommand): Promise<boolean> {
  if (!(await clusterHealthy(ports, command))) return false;
  for (const port of ports) {
    const role = await infoField(port, 'replication', 'role', command);
    if (role === 'master' && Number(await infoField(port, 'replication', 'connected_slaves', command)) < replicas)
      return false;
    if (
      role === 'slave' &&
      ((await infoField(port, 'replication', 'master_link_status', command)) !== 'up' ||
        (await infoField(port, 'replication', 'master_sync_in_progress', command)) !== '0')
    )
      return false;
  }
  return true;
}

async function clusterHealthy(live: number[], command: NodeCommand): Promise<boolean> {
  for (const port of live) {
    const clusterInfo = String(await command(port, ['CLUSTER', 'INFO']));
    if (!/^cluster_state:ok\r?$/m.test(clusterInfo)) return false;
    const ranges = await clusterSlots(port, command);
    if (ranges.some((range) => !live.includes(range.master))) return false;
    if (ranges.reduce((sum, range) => sum + range.end - range.start + 1, 0) !== SLOTS) return false;
  }
  return true;
}

function firstLive(live: number[]): number {
  const port = live[0];
  if (port === undefined) throw new Error('every cluster node is down');
  return port;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError instanceof Error ? `: ${lastError.message}` : ''}`,
      );
    await sleep(50);
  }
}
