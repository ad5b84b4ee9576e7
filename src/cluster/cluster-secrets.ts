import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ClusterConfig } from '../config/cluster-config.js';
import { ConfigError } from '../config/config-error.js';

/** The secret every node of a cluster shares, named by its id: the current one signs, it and the previous one verify. */
export interface ClusterSecrets {
  /** The id of the signing secret (carried in every signature, so a rotation can verify the old one meanwhile). */
  readonly signingId: string;
  /** HMAC-SHA256 of `payload` with the signing secret, base64url. */
  sign(payload: string): string;
  /** True when `mac` is the HMAC of `payload` under the secret named `keyId` (current or previous). */
  verify(keyId: string, payload: string, mac: string): boolean;
  /** The secrets themselves, for the redactor only (tool output never shows them). */
  readonly values: readonly string[];
}

function hmac(secret: string, payload: string): Buffer {
  return createHmac('sha256', secret).update(payload).digest();
}

/** ClusterSecrets over the configured secrets (tests build them from literals). */
export function clusterSecretsOf(
  signing: { id: string; secret: string },
  previous?: { id: string; secret: string },
): ClusterSecrets {
  const byId = new Map([[signing.id, signing.secret]]);
  if (previous) byId.set(previous.id, previous.secret);
  return {
    signingId: signing.id,
    values: [...byId.values()],
    sign: (payload) => hmac(signing.secret, payload).toString('base64url'),
    verify: (keyId, payload, mac) => {
      const secret = byId.get(keyId);
      if (secret === undefined) return false;
      const given = Buffer.from(mac, 'base64url');
      const expected = hmac(secret, payload);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/**
 * The cluster's secrets from `cluster.secret` or the file `cluster.secret_file` names (read now, at startup,
 * trimmed; a missing, unreadable or short file is a ConfigError naming it), or undefined when neither is set.
 */
export function loadClusterSecrets(cluster: ClusterConfig): ClusterSecrets | undefined {
  let secret = cluster.secret;
  if (cluster.secretFile !== undefined) {
    try {
      secret = readFileSync(cluster.secretFile, 'utf8').trim();
    } catch (error) {
      throw new ConfigError([
        { source: 'cluster.secret_file', message: `cannot read ${cluster.secretFile}: ${(error as Error).message}` },
      ]);
    }
    if (secret.length < 32)
      throw new ConfigError([
        {
          source: 'cluster.secret_file',
          message: `${cluster.secretFile} must hold a secret of at least 32 characters`,
        },
      ]);
  }
  if (secret === undefined) return undefined;
  const previous =
    cluster.previousSecret !== undefined && cluster.previousSecretId !== undefined
      ? { id: cluster.previousSecretId, secret: cluster.previousSecret }
      : undefined;
  return clusterSecretsOf({ id: cluster.secretId, secret }, previous);
}
