import type { AttachmentRef } from '../../protocol/attachments.js';
import { sessionIdOf, tenantIdOf, type SessionKey } from '../../stores/session-key.js';
import type { AttachmentStore, StoredAttachment } from '../ports/attachment-store.js';
import { attachmentUsageKey } from '../quotas/attachment-usage-key.js';

/** The tenant's stored-bytes quota, as attachments use it (TenantQuotas). */
export interface StoredBytesQuota {
  /** QUOTA_EXCEEDED (maxStoredBytes) when `bytes` more would take the tenant past its limit. */
  assertStoredRoom(tenantId: string, bytes: number): void;
  /** Record what one entry of the tenant holds now (0: nothing). */
  recordStored(tenantId: string, key: string, bytes: number): void;
}

/** The room check before a request stores its parts: every part's bytes at once, so nothing is stored half. */
export interface AttachmentRoom {
  assertRoom(session: SessionKey, bytes: number): Promise<void>;
}

/**
 * An AttachmentStore whose bytes count in the tenant's stored bytes (one entry per session): a put checks the
 * quota and counts its bytes before it writes (a failed or refused write uncounts them), a delete re-counts the
 * session, a session's removal (purge, retention) counts 0. A session's total is read from the store on its
 * first use on this node.
 */
export class CountedAttachmentStore implements AttachmentStore, AttachmentRoom {
  private readonly totals = new Map<SessionKey, number>();

  constructor(
    private readonly inner: AttachmentStore,
    private readonly quota: StoredBytesQuota,
  ) {}

  get kind(): string {
    return this.inner.kind;
  }

  /** QUOTA_EXCEEDED when `bytes` more would take the session's tenant past maxStoredBytes. */
  async assertRoom(session: SessionKey, bytes: number): Promise<void> {
    await this.total(session);
    this.quota.assertStoredRoom(tenantIdOf(session), bytes);
  }

  async put(session: SessionKey, ref: AttachmentRef, data: Buffer, maxCount: number): Promise<boolean> {
    await this.total(session);
    // The check and the count are one synchronous step: concurrent puts on this node never pass the quota together.
    this.quota.assertStoredRoom(tenantIdOf(session), data.length);
    this.add(session, data.length);
    let stored = false;
    try {
      stored = await this.inner.put(session, ref, data, maxCount);
      return stored;
    } finally {
      if (!stored) this.add(session, -data.length);
    }
  }

  get(session: SessionKey, attachmentId: string): Promise<StoredAttachment | undefined> {
    return this.inner.get(session, attachmentId);
  }

  list(session: SessionKey): Promise<AttachmentRef[]> {
    return this.inner.list(session);
  }

  async delete(session: SessionKey, attachmentId: string): Promise<void> {
    const ref = (await this.inner.list(session)).find((entry) => entry.attachmentId === attachmentId);
    await this.inner.delete(session, attachmentId);
    if (ref !== undefined && this.totals.has(session)) this.add(session, -ref.bytes);
  }

  async deleteSession(session: SessionKey): Promise<void> {
    await this.inner.deleteSession(session);
    this.totals.delete(session);
    this.quota.recordStored(tenantIdOf(session), attachmentUsageKey(sessionIdOf(session)), 0);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** The session's attachment bytes as counted, read from the store on first use. */
  private async total(session: SessionKey): Promise<number> {
    const known = this.totals.get(session);
    if (known !== undefined) return known;
    const listed = (await this.inner.list(session)).reduce((sum, ref) => sum + ref.bytes, 0);
    // A put counted meanwhile already started from the listing or after it: keep what it set.
    if (!this.totals.has(session)) this.set(session, listed);
    return this.totals.get(session) ?? listed;
  }

  private add(session: SessionKey, delta: number): void {
    this.set(session, Math.max(0, (this.totals.get(session) ?? 0) + delta));
  }

  private set(session: SessionKey, bytes: number): void {
    if (bytes > 0) this.totals.set(session, bytes);
    else this.totals.delete(session);
    this.quota.recordStored(tenantIdOf(session), attachmentUsageKey(sessionIdOf(session)), bytes);
  }
}
