import { createHash } from 'node:crypto';
import { readdir, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import {
  StoredRunWebhookSchema,
  StoredWebhookDeliverySchema,
  type StoredRunWebhook,
  type StoredWebhookDelivery,
} from '../protocol/webhooks.js';
import type { DueWebhookDelivery, WebhookStore } from '../runtime/ports/webhook-store.js';
import { prepareDirectory, syncDirectory, writeFileAtomically } from './atomic-file.js';
import { errorCode, ignoreMissing, persistenceError } from './fs-errors.js';
import { KeyedLock } from './keyed-lock.js';
import { LocalClaims } from './memory-webhook-store.js';
import type { SessionKey } from './session-key.js';

const NAME = /^[0-9a-f]{64}\.json$/;

const SessionFileSchema = z.object({
  session: z.string(),
  runs: z.record(z.string(), StoredRunWebhookSchema),
  deliveries: z.record(z.string(), StoredWebhookDeliverySchema),
});
type SessionFile = z.infer<typeof SessionFileSchema>;

/** A session key as a file name: its sha256 (never the key itself). */
function fileOf(session: SessionKey): string {
  return `${createHash('sha256').update(session).digest('hex')}.json`;
}

/**
 * WebhookStore on the local file system (the embedded default): `<dir>/<sha256 of session key>.json` holds the
 * session's run webhooks and deliveries, written atomically (temp, fsync, rename, directory fsync) one write at a
 * time per session. One node owns the directory, so claims are this process's, and the pending deliveries are
 * indexed in memory after one scan of the directory.
 */
export class FileWebhookStore implements WebhookStore {
  readonly kind = 'file';
  private readonly lock = new KeyedLock();
  private readonly claims = new LocalClaims();
  private prepared: Promise<void> | undefined;
  /** Pending deliveries by `<session>\n<id>`: their next attempt time (built by the first due()). */
  private pending: Map<string, { session: SessionKey; deliveryId: string; dueMs: number }> | undefined;
  private indexing: Promise<void> | undefined;

  constructor(readonly dir: string) {}

  private prepare(): Promise<void> {
    this.prepared ??= prepareDirectory(this.dir).catch((error: unknown) => {
      this.prepared = undefined;
      throw persistenceError('failed to prepare the webhook directory', {}, error);
    });
    return this.prepared;
  }

  private async read(session: SessionKey): Promise<SessionFile | undefined> {
    let text: string;
    try {
      text = await readFile(path.join(this.dir, fileOf(session)), 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw persistenceError('failed to read webhook deliveries', {}, error);
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      return undefined;
    }
    const parsed = SessionFileSchema.safeParse(data);
    return parsed.success && parsed.data.session === session ? parsed.data : undefined;
  }

  private async write(file: SessionFile): Promise<void> {
    await this.prepare();
    try {
      await writeFileAtomically(
        this.dir,
        path.join(this.dir, fileOf(file.session as SessionKey)),
        JSON.stringify(file),
        'webhook',
      );
      await syncDirectory(this.dir);
    } catch (error) {
      throw persistenceError('failed to write webhook deliveries', {}, error);
    }
  }

  private change(session: SessionKey, edit: (file: SessionFile) => boolean | void): Promise<void> {
    return this.lock.run(session, async () => {
      const file = (await this.read(session)) ?? { session, runs: {}, deliveries: {} };
      if (edit(file) === false) return;
      await this.write(file);
    });
  }

  private index(session: SessionKey, delivery: StoredWebhookDelivery): void {
    if (!this.pending) return;
    const key = `${session}\n${delivery.deliveryId}`;
    if (delivery.status === 'pending')
      this.pending.set(key, { session, deliveryId: delivery.deliveryId, dueMs: delivery.nextAttemptAtMs ?? 0 });
    else this.pending.delete(key);
  }

  putRunWebhook(session: SessionKey, runId: string, webhook: StoredRunWebhook): Promise<void> {
    return this.change(session, (file) => {
      file.runs[runId] = webhook;
    });
  }

  async getRunWebhook(session: SessionKey, runId: string): Promise<StoredRunWebhook | undefined> {
    const file = await this.read(session);
    return file && Object.hasOwn(file.runs, runId) ? file.runs[runId] : undefined;
  }

  async createDelivery(session: SessionKey, delivery: StoredWebhookDelivery): Promise<StoredWebhookDelivery> {
    let stored = delivery;
    await this.change(session, (file) => {
      if (Object.hasOwn(file.deliveries, delivery.deliveryId)) {
        stored = file.deliveries[delivery.deliveryId]!;
        return false;
      }
      file.deliveries[delivery.deliveryId] = delivery;
      return true;
    });
    this.index(session, stored);
    return stored;
  }

  async updateDelivery(session: SessionKey, delivery: StoredWebhookDelivery): Promise<void> {
    let kept = false;
    await this.change(session, (file) => {
      // A purged session's delivery is not brought back by an attempt that was under way.
      if (!Object.hasOwn(file.deliveries, delivery.deliveryId)) return false;
      file.deliveries[delivery.deliveryId] = delivery;
      kept = true;
      return true;
    });
    if (kept) this.index(session, delivery);
  }

  async getDelivery(session: SessionKey, deliveryId: string): Promise<StoredWebhookDelivery | undefined> {
    const file = await this.read(session);
    return file && Object.hasOwn(file.deliveries, deliveryId) ? file.deliveries[deliveryId] : undefined;
  }

  async listDeliveries(session: SessionKey): Promise<StoredWebhookDelivery[]> {
    return Object.values((await this.read(session))?.deliveries ?? {});
  }

  private async buildIndex(): Promise<void> {
    const pending = new Map<string, { session: SessionKey; deliveryId: string; dueMs: number }>();
    let names: string[] = [];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw persistenceError('failed to list webhook deliveries', {}, error);
    }
    for (const name of names) {
      if (!NAME.test(name)) continue;
      let parsed: SessionFile | undefined;
      try {
        const result = SessionFileSchema.safeParse(JSON.parse(await readFile(path.join(this.dir, name), 'utf8')));
        parsed = result.success ? result.data : undefined;
      } catch {
        parsed = undefined;
      }
      if (!parsed) continue;
      const session = parsed.session as SessionKey;
      for (const delivery of Object.values(parsed.deliveries))
        if (delivery.status === 'pending')
          pending.set(`${session}\n${delivery.deliveryId}`, {
            session,
            deliveryId: delivery.deliveryId,
            dueMs: delivery.nextAttemptAtMs ?? 0,
          });
    }
    this.pending = pending;
  }

  async due(nowMs: number, max: number): Promise<DueWebhookDelivery[]> {
    if (!this.pending) {
      this.indexing ??= this.buildIndex().finally(() => {
        this.indexing = undefined;
      });
      await this.indexing;
    }
    const out: DueWebhookDelivery[] = [];
    for (const entry of this.pending?.values() ?? []) {
      if (out.length >= max) break;
      if (entry.dueMs <= nowMs) out.push({ session: entry.session, deliveryId: entry.deliveryId });
    }
    return out;
  }

  async claim(session: SessionKey, deliveryId: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.claims.claim(`${session}\n${deliveryId}`, owner, ttlMs);
  }

  async release(session: SessionKey, deliveryId: string, owner: string): Promise<void> {
    this.claims.release(`${session}\n${deliveryId}`, owner);
  }

  deleteSession(session: SessionKey): Promise<void> {
    return this.lock.run(session, async () => {
      await unlink(path.join(this.dir, fileOf(session))).catch(ignoreMissing);
      for (const [key, entry] of this.pending ?? []) if (entry.session === session) this.pending?.delete(key);
      this.claims.dropPrefix(`${session}\n`);
    });
  }
}
