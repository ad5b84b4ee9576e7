import type { Logger } from 'pino';
import type { CodeConfig } from './config/code-config.js';
import { CodeError } from './errors.js';
import type { Agent } from './runtime/live-sessions/agent.js';
import type { HostEnv } from './runtime/ports/host-env.js';
import type { ScheduleStore } from './runtime/ports/schedule-store.js';
import type { TokenGrants } from './runtime/schedules/schedule-caller.js';
import { systemScheduleClock, type ScheduleClock } from './runtime/schedules/schedule-clock.js';
import { Schedules } from './runtime/schedules/schedules.js';
import { FileScheduleStore } from './stores/file-schedule-store.js';
import { MemoryScheduleStore } from './stores/memory-schedule-store.js';
import type { RedisClient } from './stores/redis-client.js';
import { RedisScheduleStore } from './stores/redis-schedule-store.js';

/** The schedule store beside the session store: Redis (every node's), memory, or files under <data_dir>. */
export async function createScheduleStore(config: CodeConfig, redis: RedisClient | undefined): Promise<ScheduleStore> {
  if (redis) return new RedisScheduleStore(redis, config.redisKeyPrefix);
  if (config.storageBackend === 'memory') return new MemoryScheduleStore();
  const store = new FileScheduleStore(config.dataDir);
  try {
    await store.init();
  } catch (error) {
    throw new CodeError(
      'SESSION_INITIALIZATION_ERROR',
      `schedule store at ${config.dataDir}: ${error instanceof Error ? error.message : String(error)}`,
      { resource: 'dataDir' },
    );
  }
  return store;
}

/** What the schedules are built from. */
export interface SchedulesSetup {
  readonly config: CodeConfig;
  readonly redis: RedisClient | undefined;
  readonly agent: Agent;
  readonly grants: TokenGrants;
  readonly hostEnv: HostEnv;
  readonly nodeId: string;
  readonly logger: Logger;
  /** Replaces the wall clock (tests). */
  readonly clock?: ScheduleClock;
}

/** The schedules (store, scheduler, routes' operations), not started yet. */
export async function createSchedules(setup: SchedulesSetup): Promise<Schedules> {
  const { config, logger } = setup;
  return new Schedules({
    store: await createScheduleStore(config, setup.redis),
    sessions: setup.agent,
    grants: setup.grants,
    nodeId: setup.nodeId,
    clock: setup.clock ?? systemScheduleClock(),
    newId: (prefix) => setup.hostEnv.newId(prefix),
    maxPerTenant: config.limits.maxSchedulesPerTenant,
    onError: (error, scheduleId) =>
      logger.warn({ scheduleId, err: error instanceof Error ? error.message : String(error) }, 'schedule tick failed'),
  });
}
