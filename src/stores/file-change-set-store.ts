import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { ChangeSetSchema, type ChangeSet } from '../protocol/change-set.js';
import type { ChangeSetStore } from '../runtime/ports/change-set-store.js';
import { syncDirectory, writeFileAtomically } from './atomic-file.js';
import { errorCode, persistenceError } from './fs-errors.js';
import { inHeld, openHeldChild, readHeldFile, removeHeldEntry } from './held-directory-files.js';
import { KeyedLock } from './keyed-lock.js';
import { tenantPartOf, type SessionKey } from './session-key.js';

const NAME = /^[0-9a-f]{64}\.json$/;

/** A run id as a file name: its sha256 (never the id itself). */
function fileOf(runId: string): string {
  return `${createHash('sha256').update(runId).digest('hex')}.json`;
}

/**
 * ChangeSetStore on the local file system: `<dir>/<tenant>/<session id>/<sha256 of run id>.json`, written atomically
 * (temp, fsync, rename, directory fsync), the tenant's and session's directories opened one below the other without
 * following a symlink (as the attachment store does). Survives a restart.
 */
export class FileChangeSetStore implements ChangeSetStore {
  readonly kind = 'file';
  private readonly lock = new KeyedLock();

  constructor(readonly dir: string) {}

  put(session: SessionKey, changeSet: ChangeSet): Promise<void> {
    return this.lock.run(session, async () => {
      const details = { runId: changeSet.run_id };
      const dir = await this.heldSession(session, true, 'failed to write a change set', details);
      if (dir === undefined) throw persistenceError('failed to write a change set', details, undefined);
      try {
        await writeFileAtomically(
          inHeld(dir),
          inHeld(dir, fileOf(changeSet.run_id)),
          JSON.stringify(changeSet),
          'change',
        );
        await syncDirectory(inHeld(dir));
      } catch (error) {
        throw persistenceError('failed to write a change set', details, error);
      } finally {
        await dir.close();
      }
    });
  }

  async get(session: SessionKey, runId: string): Promise<ChangeSet | undefined> {
    const details = { runId };
    const dir = await this.heldSession(session, false, 'failed to read a change set', details);
    if (dir === undefined) return undefined;
    try {
      const file = await readHeldFile(dir, fileOf(runId));
      if (file === undefined) return undefined;
      const parsed = ChangeSetSchema.safeParse(JSON.parse(file.data.toString('utf8')));
      return parsed.success && parsed.data.run_id === runId ? parsed.data : undefined;
    } catch (error) {
      throw persistenceError('failed to read a change set', details, error);
    } finally {
      await dir.close();
    }
  }

  async bytes(session: SessionKey): Promise<number> {
    const dir = await this.heldSession(session, false, 'failed to list change sets', {});
    if (dir === undefined) return 0;
    try {
      let total = 0;
      for (const name of await readdir(inHeld(dir))) {
        if (NAME.test(name)) total += (await stat(inHeld(dir, name)).catch(() => ({ size: 0 }))).size;
      }
      return total;
    } finally {
      await dir.close();
    }
  }

  deleteSession(session: SessionKey): Promise<void> {
    return this.lock.run(session, async () => {
      const root = await this.openRoot(false).catch((error: unknown) => {
        throw persistenceError('failed to delete change sets', {}, error);
      });
      if (root === undefined) return;
      let tenant: FileHandle | undefined;
      try {
        tenant = await openHeldChild(root, tenantPartOf(session), false);
        if (tenant !== undefined) await removeHeldEntry(tenant, session.slice(session.indexOf('/') + 1));
      } catch (error) {
        if (errorCode(error) === 'ELOOP' || errorCode(error) === 'ENOTDIR') return;
        throw persistenceError('failed to delete change sets', {}, error);
      } finally {
        await tenant?.close();
        await root.close();
      }
    });
  }

  async close(): Promise<void> {
    await this.lock.drain();
  }

  private async openRoot(create: boolean): Promise<FileHandle | undefined> {
    const flags = constants.O_RDONLY | constants.O_DIRECTORY;
    try {
      return await open(this.dir, flags);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
      if (!create) return undefined;
    }
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    return open(this.dir, flags);
  }

  private async heldSession(
    session: SessionKey,
    create: boolean,
    message: string,
    details: Record<string, unknown>,
  ): Promise<FileHandle | undefined> {
    let root: FileHandle | undefined;
    let tenant: FileHandle | undefined;
    try {
      root = await this.openRoot(create);
      tenant = root === undefined ? undefined : await openHeldChild(root, tenantPartOf(session), create);
      return tenant === undefined
        ? undefined
        : await openHeldChild(tenant, session.slice(session.indexOf('/') + 1), create);
    } catch (error) {
      throw persistenceError(message, details, error);
    } finally {
      await tenant?.close();
      await root?.close();
    }
  }
}
