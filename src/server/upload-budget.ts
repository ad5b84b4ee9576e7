/** What an upload holds of its tenant's budget until its answer is sent (or its connection closes). */
export interface UploadLease {
  /** Take `bytes` more; false (nothing taken) when the tenant's uploads would hold more than the limit. */
  take(bytes: number): boolean;
  /** Bytes the tenant's uploads hold now. */
  used(): number;
}

/**
 * The bytes of uploads each tenant holds in memory at once (bodies being received, and received but not answered
 * yet): without it, one tenant's many slow uploads (limits.maxConnectionsPerAddress of them, each up to
 * limits.maxAttachmentBytes) would hold the memory of the server all tenants share.
 */
export class UploadBudget {
  private readonly held = new Map<string, number>();

  constructor(
    /** Bytes one tenant's uploads may hold at once. */
    readonly limit: number,
  ) {}

  /** A lease for one upload of `tenantId`, given back when `answered` emits close (the response ended either way). */
  lease(tenantId: string, answered: { once(event: 'close', listener: () => void): unknown }): UploadLease {
    let taken = 0;
    answered.once('close', () => {
      const left = (this.held.get(tenantId) ?? 0) - taken;
      taken = 0;
      if (left > 0) this.held.set(tenantId, left);
      else this.held.delete(tenantId);
    });
    return {
      take: (bytes) => {
        const used = this.held.get(tenantId) ?? 0;
        if (used + bytes > this.limit) return false;
        this.held.set(tenantId, used + bytes);
        taken += bytes;
        return true;
      },
      used: () => this.held.get(tenantId) ?? 0,
    };
  }
}
