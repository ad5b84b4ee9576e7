import { CodeError } from '../../errors.js';

/** What a QUOTA_EXCEEDED answer says: the tenant, the quota by name, its limit and the usage. */
export interface QuotaExcess {
  readonly tenantId: string;
  /** The quota's name in details.quota (`maxOpenSessions`, `maxSessionBytesPerTenant`, ...). */
  readonly quota: string;
  readonly limit: number;
  readonly used: number;
  /** The config key(s) that set the limit, as the message names them. */
  readonly configKey: string;
  /** Set where waiting helps: details.retryAfterSeconds and the Retry-After header. */
  readonly retryAfterSeconds?: number | undefined;
  /** More details (e.g. the bytes the refused session needs). */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** The one QUOTA_EXCEEDED (429) shape every per-tenant bound answers with: `details {quota, limit, used, tenantId, retryAfterSeconds?}`. */
export function quotaExceeded(excess: QuotaExcess): CodeError {
  const { tenantId, quota, limit, used, configKey, retryAfterSeconds } = excess;
  return new CodeError(
    'QUOTA_EXCEEDED',
    `tenant ${tenantId} is over its quota ${quota} (${used} of ${limit}; config ${configKey})${retryAfterSeconds !== undefined ? `; retry after ${retryAfterSeconds} s` : ''}`,
    {
      quota,
      limit,
      used,
      tenantId,
      ...excess.extra,
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
    },
  );
}
