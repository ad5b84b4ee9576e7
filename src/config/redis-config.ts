import { z } from 'zod';

/** `host:port` of one Redis Cluster seed node (IPv6 in brackets). */
const CLUSTER_NODE = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?):[0-9]{1,5}$/;

/**
 * The `redis {}` block: `cluster` (seed nodes `host:port`, or REDIS_CLUSTER_NODES) runs every Redis store on
 * a Redis Cluster instead of the one Redis of `redis_url` (with `username`, `password` and `tls` for its
 * nodes); `min_replicas_ack` is how many replicas must
 * acknowledge a fenced write (snapshot save, checkpoint, lease takeover) before it counts (WAIT; default: 1
 * when the Redis or cluster has replicas, else 0), within `replica_ack_timeout_ms`.
 */
export const RedisConfigSchema = z
  .object({
    cluster: z
      .array(z.string().regex(CLUSTER_NODE, 'redis.cluster entries must be "host:port" seed nodes (IPv6 in brackets)'))
      .min(1, 'redis.cluster needs at least one seed node')
      .max(64)
      .optional(),
    /** ACL user and password of the cluster's nodes (REDIS_URL carries its own); write `password = env("REDIS_PASSWORD")`. */
    username: z.string().min(1).max(256).optional(),
    password: z.string().min(1).max(1024).optional(),
    /** Connect to the cluster's nodes over TLS. */
    tls: z.boolean().default(false),
    minReplicasAck: z.number().int().min(0).max(16).optional(),
    replicaAckTimeoutMs: z.number().int().min(10).max(60_000).default(1000),
  })
  .strict()
  .prefault({});

/** The resolved `redis {}` block. */
export type RedisConfig = z.infer<typeof RedisConfigSchema>;
