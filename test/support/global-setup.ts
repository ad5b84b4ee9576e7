// vitest globalSetup (listed in vitest.config.ts): starts ONE throwaway redis-server for the whole test
// run and hands its URL to tests as inject('redisUrl'), and, when the "redis-cluster" project is part of the
// run, ONE local Redis Cluster (3 masters, 3 replicas) whose seeds tests read as inject('redisClusterSeeds').
// vitest accepts named `setup`/`teardown` exports here, so no default export is needed; `setup` returns its
// own teardown. It also builds the console (web/ into dist/web) so the console routes serve a fresh build.
import type { TestProject } from 'vitest/node';
import { buildWeb } from '../../scripts/build-web.js';
import { startRedisCluster } from './redis-cluster.js';
import { startRedisServer } from './redis-server.js';

declare module 'vitest' {
  /** Values the global setup provides to every test file through inject(). */
  export interface ProvidedContext {
    /** URL of the run's shared redis-server; tests isolate themselves with a random key prefix. */
    redisUrl: string;
    /** The run's shared Redis Cluster as comma-joined "127.0.0.1:port" seeds ("" when no cluster project runs). */
    redisClusterSeeds: string;
  }
}

/** Start the run's redis-server (and its Redis Cluster when the "redis-cluster" project runs), provide them, and return the teardown. */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  await buildWeb();
  const wantsCluster = project.vitest.projects.some((candidate) => candidate.name === 'redis-cluster');
  // Started side by side: the cluster (about 2 s) does not add to the single server's start.
  const [server, cluster] = await Promise.allSettled([
    startRedisServer(),
    wantsCluster ? startRedisCluster() : Promise.resolve(undefined),
  ]);
  const started: { stop(): Promise<void> }[] = [];
  if (server.status === 'fulfilled') started.push(server.value);
  if (cluster.status === 'fulfilled' && cluster.value !== undefined) started.push(cluster.value);
  const stopAll = async (): Promise<void> => {
    await Promise.all(started.map((handle) => handle.stop()));
  };
  if (server.status === 'rejected' || cluster.status === 'rejected') {
    await stopAll();
    throw server.status === 'rejected' ? server.reason : cluster.status === 'rejected' ? cluster.reason : undefined;
  }
  project.provide('redisUrl', server.value.url);
  project.provide('redisClusterSeeds', cluster.value?.seeds ?? '');
  return stopAll;
}
