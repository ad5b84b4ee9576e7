import type { Cluster, Redis } from 'ioredis';

/** The Redis connection the stores and cluster services use: one Redis (`REDIS_URL`) or a Redis Cluster client (`REDIS_CLUSTER_NODES`). */
export type RedisClient = Redis | Cluster;
