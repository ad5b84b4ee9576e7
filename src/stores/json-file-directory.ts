import { constants as fsConstants } from 'node:fs';
import { access, open, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { CodeError } from '../errors.js';
import { prepareDirectory, syncDirectory, writeFileAtomically } from './atomic-file.js';
import { errorCode, persistenceError } from './fs-errors.js';
import { KeyedLock } from './keyed-lock.js';

const RECORD_SUFFIX = '.json';

/** How a JsonFileDirectory names its directory, its records and their ids. */
export interface JsonFileDirectoryOptions {
  /** Directory holding one `<id>.json` per record; created with mode 0o700. */
  dir: string;
  /** The store's name in errors, e.g. "file checkpoint store". */
  storeName: string;
  /** What one file holds, e.g. "checkpoint". */
  record: string;
  /** What a record belongs to, e.g. "run": errors speak of "the checkpoint of run <id>". */
  owner: string;
  /** The key of the id in error details, e.g. "runId". */
  idKey: string;
  /** Ids accepted; none may start with ".", so no id can name a temp file. */
  idPattern: RegExp;
  /**
   * Create the directory on the first write only (reads, removals and listings of a missing directory
   * find nothing), and fsync its parent when creating it: for one directory per tenant under a store.
   */
  createOnWrite?: boolean;
}

/** This process writes record files by rename: a symlink or anything but a regular file there was planted, and is not read. */
const RECORD_READ_FLAGS = fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK;

async function readRecordFile(file: string): Promise<string> {
  const handle = await open(file, RECORD_READ_FLAGS);
  try {
    if (!(await handle.stat()).isFile())
      throw Object.assign(new Error(`${file} is not a regular file`), { code: 'EINVAL' });
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * The file stores' storage: one JSON file per id in a directory this process owns, each write a
 * complete replacement (temp file, fsync, rename, directory fsync), writes and removals of one id
 * applied in call order. Failures are PERSISTENCE_FAILED naming the record and the errno code.
 */
export class JsonFileDirectory {
  /** Absolute directory of the record files. */
  readonly dir: string;
  private readonly options: JsonFileDirectoryOptions;
  private readonly lock = new KeyedLock();
  private initialized: Promise<void> | undefined;
  private closed = false;

  constructor(options: JsonFileDirectoryOptions) {
    this.options = options;
    this.dir = path.resolve(options.dir);
  }

  /** Create the directory and remove temp files left by a crashed writer; idempotent, retried after a failure. */
  init(): Promise<void> {
    this.initialized ??= this.initialize().catch((error: unknown) => {
      // A failed start (e.g. EACCES) is retried on the next call rather than remembered forever.
      this.initialized = undefined;
      throw error;
    });
    return this.initialized;
  }

  /** Throw PERSISTENCE_FAILED once close() has been called. */
  assertOpen(): void {
    if (this.closed) throw new CodeError('PERSISTENCE_FAILED', `the ${this.options.storeName} is closed`);
  }

  /** Atomically replace the id's file with `data`, after earlier writes and removals of that id; SNAPSHOT_INVALID for a bad id. */
  async write(id: string, data: string): Promise<void> {
    if (!this.options.idPattern.test(id)) throw this.invalidId(id);
    await this.init();
    await this.lock.run(id, async () => {
      try {
        await writeFileAtomically(this.dir, this.fileFor(id), data, id);
      } catch (error) {
        throw persistenceError(`failed to save ${this.describe(id)}`, this.details(id), error);
      }
      await this.syncDir(id);
    });
  }

  /**
   * Read the id's file, parse its JSON with `parse` and check with `idOf` that it holds this id;
   * undefined when the file (or a valid id for it) does not exist. Bad content is SNAPSHOT_INVALID.
   */
  async read<T>(
    id: string,
    parse: (raw: unknown, source: string) => T,
    idOf: (value: T) => string,
  ): Promise<T | undefined> {
    if (!this.options.idPattern.test(id)) return undefined;
    if (!this.options.createOnWrite) await this.init();
    const { record, owner } = this.options;
    const file = this.fileFor(id);
    let text: string;
    try {
      text = await readRecordFile(file);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw persistenceError(`failed to read ${this.describe(id)}`, this.details(id), error);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      const reason = error instanceof Error ? error.message : 'parse error';
      throw new CodeError('SNAPSHOT_INVALID', `${record} file ${file} is not valid JSON: ${reason}`, {
        ...this.details(id),
        file,
      });
    }
    const value = parse(raw, `${record} file ${file}`);
    const held = idOf(value);
    if (held !== id) {
      throw new CodeError(
        'SNAPSHOT_INVALID',
        `${record} file ${file} holds ${owner} ${JSON.stringify(held)}, not ${JSON.stringify(id)}`,
        {
          ...this.details(id),
          file,
        },
      );
    }
    return value;
  }

  /** Remove the id's file after any queued write; no error when absent. */
  async remove(id: string): Promise<void> {
    if (!this.options.idPattern.test(id)) return;
    if (!this.options.createOnWrite) await this.init();
    await this.lock.run(id, async () => {
      try {
        await unlink(this.fileFor(id));
      } catch (error) {
        if (errorCode(error) === 'ENOENT') return;
        throw persistenceError(`failed to delete ${this.describe(id)}`, this.details(id), error);
      }
      await this.syncDir(id);
    });
  }

  /** Ids of every record file, sorted; temp files and foreign names are ignored. */
  async ids(): Promise<string[]> {
    if (!this.options.createOnWrite) await this.init();
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if (this.options.createOnWrite && errorCode(error) === 'ENOENT') return [];
      throw persistenceError(`failed to list the ${this.options.storeName}`, {}, error);
    }
    return names
      .filter((name) => name.endsWith(RECORD_SUFFIX))
      .map((name) => name.slice(0, -RECORD_SUFFIX.length))
      .filter((id) => this.options.idPattern.test(id))
      .sort();
  }

  /** True while open when the directory exists and is readable and writable. */
  async ping(): Promise<boolean> {
    if (this.closed) return false;
    try {
      await this.init();
      await access(this.dir, fsConstants.R_OK | fsConstants.W_OK | fsConstants.X_OK);
      return true;
    } catch {
      return false;
    }
  }

  /** Wait for queued writes and removals to finish, then refuse further use. */
  async close(): Promise<void> {
    this.closed = true;
    await this.lock.drain();
  }

  private async initialize(): Promise<void> {
    try {
      await prepareDirectory(this.dir);
      // The new directory's own entry must survive a power loss too.
      if (this.options.createOnWrite) await syncDirectory(path.dirname(this.dir));
    } catch (error) {
      throw persistenceError(`failed to open the ${this.options.storeName} directory`, {}, error);
    }
  }

  private async syncDir(id: string): Promise<void> {
    try {
      await syncDirectory(this.dir);
    } catch (error) {
      throw persistenceError(`failed to make ${this.describe(id)} durable`, this.details(id), error);
    }
  }

  private fileFor(id: string): string {
    const file = path.join(this.dir, `${id}${RECORD_SUFFIX}`);
    // Belt and braces over the id pattern: a record file is always a direct child of dir.
    if (path.dirname(file) !== this.dir || path.basename(file) !== `${id}${RECORD_SUFFIX}`) throw this.invalidId(id);
    return file;
  }

  private invalidId(id: string): CodeError {
    const { owner } = this.options;
    return new CodeError(
      'SNAPSHOT_INVALID',
      `${owner} id ${JSON.stringify(id)} is not a valid ${owner} id`,
      this.details(id),
    );
  }

  private describe(id: string): string {
    return `the ${this.options.record} of ${this.options.owner} ${id}`;
  }

  private details(id: string): Record<string, unknown> {
    return { [this.options.idKey]: id };
  }
}
