// vitest globalSetup (listed in vitest.config.ts): starts ONE throwaway redis-server for the whole test
// run and hands its URL to tests as inject('redisUrl'). vitest accepts named `setup`/`teardown`
// exports here, so no default export is needed; `setup` returns its own teardown.
import type { TestProject } from 'vitest/node';
import { startRedisServer } from './redis-server.js';

declare module 'vitest' {
  /** Values the global setup provides to every test file through inject(). */
  export interface ProvidedContext {
    /** URL of the run's shared redis-server; tests isolate themselves with a random key prefix. */
    redisUrl: string;
  }
}

/** Start the run's redis-server, provide its URL as "redisUrl", and return the teardown that stops it. */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startRedisServer();
  project.provide('redisUrl', server.url);
  return () => server.stop();
}
