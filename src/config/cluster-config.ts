import { z } from 'zod';

/** A secret that signs hops between nodes and SSE tickets: long enough that it cannot be guessed. */
const SecretSchema = z.string().min(32, 'must be at least 32 characters').max(4096);
const KeyIdSchema = z.string().regex(/^[A-Za-z0-9_.-]{1,32}$/, 'must be 1-32 letters, digits, "_", "." or "-"');

/**
 * A peer URL pattern: an origin (`http(s)://host[:port]`, no path) where `*` in the host or port matches
 * any run of characters other than `.`, `:` and `/` (`http://*.a3s.svc:8080`, `http://127.0.0.1:*`).
 */
const PeerUrlSchema = z
  .string()
  .regex(
    /^https?:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9*_.-]+)(:([0-9]{1,5}|\*))?\/?$/,
    'peer_urls entries must be origins like "http://10.0.0.7:8080" or "http://*.a3s.svc:8080" ("*" in the host or port), without a path',
  );

/**
 * The `cluster` block: lease and heartbeat timing, the secret nodes share, and where they may forward.
 * `secret` (A3S_CLUSTER_SECRET) or `secret_file` (A3S_CLUSTER_SECRET_FILE, read at startup, trimmed) is
 * required with Redis; `secret_id` names it in every signature so a rotation can add the next secret as
 * `secret` while the old one verifies as `previous_secret` (with its `previous_secret_id`) until every node
 * has the new one.
 */
export const ClusterConfigSchema = z
  .object({
    leaseTtlMs: z.number().int().min(200).max(600_000).default(15_000),
    nodeTtlMs: z.number().int().min(200).max(600_000).default(10_000),
    secret: SecretSchema.optional(),
    secretFile: z.string().min(1).optional(),
    secretId: KeyIdSchema.default('1'),
    previousSecret: SecretSchema.optional(),
    previousSecretId: KeyIdSchema.optional(),
    /** Where a node may forward a request for a session another node owns: advertise URLs must match one. */
    peerUrls: z.array(PeerUrlSchema).max(256).default([]),
  })
  .strict()
  .superRefine((cluster, ctx) => {
    if (cluster.secret !== undefined && cluster.secretFile !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['secretFile'],
        message: 'set either cluster.secret or cluster.secret_file, not both',
      });
    if ((cluster.previousSecret === undefined) !== (cluster.previousSecretId === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [cluster.previousSecret === undefined ? 'previousSecret' : 'previousSecretId'],
        message: 'previous_secret and previous_secret_id go together',
      });
    }
    if (cluster.previousSecretId !== undefined && cluster.previousSecretId === cluster.secretId)
      ctx.addIssue({ code: 'custom', path: ['previousSecretId'], message: 'must differ from secret_id' });
  })
  .prefault({});

/** The parsed `cluster` block. */
export type ClusterConfig = z.infer<typeof ClusterConfigSchema>;
