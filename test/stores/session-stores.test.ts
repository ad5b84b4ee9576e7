import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/stores/file-session-store.js';
import { MemorySessionStore } from '../../src/stores/memory-session-store.js';
import { parseSnapshot } from '../../src/stores/parse-snapshot.js';
import { RedisSessionStore } from '../../src/stores/redis-session-store.js';
import { sessionKey } from '../../src/stores/session-key.js';
import { makeOddIdSnapshot, makeSnapshot } from '../support/snapshot-fixtures.js';
import { connectRedisTarget } from '../support/redis-target.js';
import { deleteKeysWithPrefix, randomKeyPrefix } from './redis-test-client.js';
import { runSessionStoreContract } from './session-store-contract.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

runSessionStoreContract('memory', async () => ({ store: new MemorySessionStore() }), { storesText: false });

runSessionStoreContract(
  'file',
  async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'a3s-file-store-'));
    const store = new FileSessionStore({ dir: path.join(dir, 'sessions') });
    await store.init();
    return {
      store,
      writeRaw: async (sessionId, text) => {
        await mkdir(path.join(dir, 'sessions', 'tenant-a'), { recursive: true });
        await writeFile(path.join(dir, 'sessions', 'tenant-a', `${sessionId}.json`), text);
      },
      dispose: () => rm(dir, { recursive: true, force: true }),
    };
  },
  { storesText: true },
);

runSessionStoreContract(
  'redis',
  async () => {
    const redis = connectRedisTarget();
    const keyPrefix = randomKeyPrefix();
    const store = new RedisSessionStore({ redis, keyPrefix });
    return {
      store,
      writeRaw: async (sessionId, text) => {
        // Hand-written data: the gen field mirrors the text's generation when it has one.
        const generation = /"generation":\s*(\d+)/.exec(text)?.[1] ?? '0';
        await redis.hset(
          store.sessionKey(sessionKey('tenant-a', sessionId)),
          'gen',
          generation,
          'enc',
          'json',
          'data',
          text,
        );
        await redis.sadd(store.tenantIndexKey('tenant-a'), sessionId);
      },
      dispose: async () => {
        await deleteKeysWithPrefix(redis, keyPrefix);
        await redis.quit();
      },
    };
  },
  { storesText: true },
);

describe('parseSnapshot', () => {
  it('names the source and the version it reads', () => {
    expect(() => parseSnapshot({ schema_version: 2 }, 'redis key s1')).toThrow(
      'unsupported snapshot schema_version 2 in redis key s1; this server reads version 1',
    );
  });

  it('names at most a few failing paths', () => {
    const error = captureError(() => parseSnapshot({ schema_version: 1 }, 'test'));
    expect(error).toMatchObject({ code: 'SNAPSHOT_INVALID' });
    expect(error.message).toMatch(/^invalid snapshot in test: generation: .+ \(and \d+ more\)$/);
  });

  it('rejects non-objects', () => {
    expect(captureError(() => parseSnapshot(null, 'test')).message).toMatch(/\(root\)/);
  });

  it('tolerates cyclic in-memory values without hanging', () => {
    const snapshot = makeSnapshot('s1', 1);
    const payload: Record<string, unknown> = {};
    payload.self = payload;
    snapshot.trace_events[0] = { ...snapshot.trace_events[0]!, payload };
    expect(parseSnapshot(snapshot, 'test').generation).toBe(1);
  });
});

describe('FileSessionStore', () => {
  let root: string;
  let dir: string;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'a3s-file-store-'));
    dir = path.join(root, 'sessions');
  });

  afterEach(async () => {
    await chmod(dir, 0o700).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });

  it('creates its directory private to the owner', async () => {
    const store = new FileSessionStore({ dir });
    await store.init();
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    await store.close();
  });

  it('ignores temp and foreign files in list() and removes stale temp files on init()', async () => {
    const first = new FileSessionStore({ dir });
    await first.save(makeSnapshot('s1', 1));
    const tenantDir = path.join(dir, 'tenant-a');
    await writeFile(path.join(tenantDir, '.s1.0123456789abcdef.tmp'), '{"partial":');
    await writeFile(path.join(tenantDir, 'notes.txt'), 'not a session');
    await writeFile(path.join(tenantDir, '..json'), '{}');
    await writeFile(path.join(dir, '.x.0123456789abcdef.tmp'), '{"partial":');
    expect(await first.list()).toEqual([sessionKey('tenant-a', 's1')]);
    await first.close();

    const second = new FileSessionStore({ dir });
    await second.init();
    expect(await readdir(dir)).toEqual(['tenant-a']);
    expect((await readdir(tenantDir)).sort()).toEqual(['..json', 'notes.txt', 's1.json']);
    expect((await second.load(sessionKey('tenant-a', 's1')))?.generation).toBe(1);
    await second.close();
  });

  it('keeps every file inside its directory, whatever the ids', async () => {
    const store = new FileSessionStore({ dir });
    await store.init();
    // An empty id is no snapshot's.
    await expect(store.save(makeOddIdSnapshot('', 1, '../up'))).rejects.toMatchObject({ code: 'SNAPSHOT_INVALID' });
    for (const id of ['../escape', '..', '.hidden', 'a/b', '%', 'x'.repeat(129)]) {
      await store.save(makeOddIdSnapshot(id, 1, '../up'));
      expect((await store.load(sessionKey('../up', id)))?.session.id).toBe(id);
    }
    expect(existsSync(path.join(root, 'escape.json'))).toBe(false);
    expect(existsSync(path.join(root, 'up'))).toBe(false);
    expect(await readdir(dir)).toEqual(['%2E.%2Fup']);
    expect((await readdir(path.join(dir, '%2E.%2Fup'))).sort()).toEqual(
      ['%25.json', '%2E..json', '%2E.%2Fescape.json', '%2Ehidden.json', 'a%2Fb.json', `${'x'.repeat(129)}.json`].sort(),
    );
    for (const id of ['../escape', '%']) await store.delete(sessionKey('../up', id));
    expect(await store.list('../up')).toHaveLength(4);
    await store.close();
  });

  it('rejects a file holding another session, and ignores one of another tenant', async () => {
    const store = new FileSessionStore({ dir });
    await store.init();
    await mkdir(path.join(dir, 'tenant-a'));
    await mkdir(path.join(dir, 'tenant-b'));
    await writeFile(path.join(dir, 'tenant-a', 's2.json'), JSON.stringify(makeSnapshot('s1', 1)));
    await expect(store.load(sessionKey('tenant-a', 's2'))).rejects.toMatchObject({
      code: 'SNAPSHOT_INVALID',
      message: /holds session "s1"/,
    });
    await writeFile(path.join(dir, 'tenant-b', 's1.json'), JSON.stringify(makeSnapshot('s1', 1)));
    expect(await store.load(sessionKey('tenant-b', 's1'))).toBeUndefined();
    await store.close();
  });

  it.skipIf(process.getuid?.() === 0)(
    'reports write failures as PERSISTENCE_FAILED naming the session, without internals',
    async () => {
      const store = new FileSessionStore({ dir });
      await store.save(makeSnapshot('s1', 1));
      await chmod(path.join(dir, 'tenant-a'), 0o500);
      const error = await store.save(makeSnapshot('s1', 2)).then(
        () => undefined,
        (thrown: unknown) => thrown as Error & { code: string },
      );
      expect(error).toMatchObject({
        code: 'PERSISTENCE_FAILED',
        message: 'failed to save the snapshot of session s1 (EACCES)',
      });
      expect(error?.message).not.toContain(dir);
      await chmod(path.join(dir, 'tenant-a'), 0o700);
      expect((await store.load(sessionKey('tenant-a', 's1')))?.generation).toBe(1);
      await store.close();
    },
  );

  it('fails a save whose rename is refused, keeping no temp file', async () => {
    const store = new FileSessionStore({ dir });
    await store.init();
    // A non-empty directory where the snapshot file belongs makes the rename fail, even for root.
    await mkdir(path.join(dir, 'tenant-a', 's1.json', 'blocker'), { recursive: true });
    await expect(store.save(makeSnapshot('s1', 1))).rejects.toMatchObject({
      code: 'PERSISTENCE_FAILED',
      message: expect.stringMatching(/^failed to save the snapshot of session s1 \(E[A-Z]+\)$/),
      details: { sessionId: 's1' },
    });
    expect((await readdir(path.join(dir, 'tenant-a'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    await store.close();
  });

  it('refuses use after close', async () => {
    const store = new FileSessionStore({ dir });
    await store.close();
    await expect(store.save(makeSnapshot('s1', 1))).rejects.toMatchObject({ code: 'PERSISTENCE_FAILED' });
    expect(await store.ping()).toBe(false);
  });
});

const viteNode = path.join(repoRoot, 'node_modules', 'vite-node', 'vite-node.mjs');

describe.skipIf(!existsSync(viteNode))('FileSessionStore crash safety', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'a3s-crash-'));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'keeps a complete generation, at least the last one reported, across SIGKILLs mid-write',
    { timeout: 180_000 },
    async () => {
      const sessionId = 'crash-1';
      const target = path.join(dir, 'tenant-a', `${sessionId}.json`);
      const tenantDir = path.join(dir, 'tenant-a');
      let nextGeneration = 1;
      let tempFilesSeenAfterKill = 0;
      let completeReads = 0;

      for (let round = 0; round < 6; round += 1) {
        const child = spawn(
          process.execPath,
          [
            viteNode,
            path.join(repoRoot, 'test', 'fixtures', 'crash-writer.ts'),
            dir,
            sessionId,
            String(nextGeneration),
            String(4 * 1024 * 1024),
          ],
          { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        const exited = new Promise<NodeJS.Signals | null>((resolve) =>
          child.on('close', (_code, signal) => resolve(signal)),
        );
        let childExited = false;
        void exited.then(() => (childExited = true));

        // Wait for a few completed generations, reading the target all the while: every read must be
        // a complete snapshot, never a partially written file.
        const wanted = 2 + Math.floor(Math.random() * 3);
        while (reportedGenerations(stdout).length < wanted) {
          if (childExited) throw new Error(`crash writer exited early: ${stderr}`);
          completeReads += await readTargetIfPresent(target, sessionId);
        }
        if (round % 2 === 0) {
          await sleep(Math.random() * 40);
        } else {
          // Aim inside the write window: kill as soon as the next temp file shows up.
          while (!(await readdir(tenantDir).catch(() => [] as string[])).some((name) => name.endsWith('.tmp'))) {
            if (childExited) throw new Error(`crash writer exited early: ${stderr}`);
          }
        }
        child.kill('SIGKILL');
        expect(await exited).toBe('SIGKILL');

        const reported = reportedGenerations(stdout);
        const lastReported = reported.at(-1) as number;
        expect(lastReported).toBeGreaterThanOrEqual(nextGeneration);
        tempFilesSeenAfterKill += (await readdir(tenantDir)).filter((name) => name.endsWith('.tmp')).length;

        const store = new FileSessionStore({ dir });
        await store.init();
        expect((await readdir(tenantDir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
        expect(await store.list()).toEqual([sessionKey('tenant-a', sessionId)]);
        const loaded = await store.load(sessionKey('tenant-a', sessionId));
        // The child saves one generation at a time, so at most the one after the last report is on disk.
        expect(loaded?.generation).toBeGreaterThanOrEqual(lastReported);
        expect(loaded?.generation).toBeLessThanOrEqual(lastReported + 1);
        expect(loaded).toEqual(
          parseSnapshot(
            makeSnapshot(sessionId, loaded?.generation ?? -1, { paddingBytes: 4 * 1024 * 1024 }),
            'expected',
          ),
        );
        await store.close();
        nextGeneration = (loaded?.generation ?? 0) + 1;
      }

      expect(completeReads).toBeGreaterThan(0);
      // The aimed kills must have interrupted at least one write, or the test proved nothing about it.
      expect(tempFilesSeenAfterKill).toBeGreaterThan(0);
    },
  );
});

function reportedGenerations(stdout: string): number[] {
  // Only newline-terminated lines count: a line is printed after its save resolved.
  return stdout
    .split('\n')
    .slice(0, -1)
    .map((line) => Number(line));
}

async function readTargetIfPresent(target: string, sessionId: string): Promise<number> {
  let text: string;
  try {
    text = await readFile(target, 'utf8');
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') {
      await sleep(2);
      return 0;
    }
    throw error;
  }
  const snapshot = parseSnapshot(JSON.parse(text), `target file read while the writer runs`);
  expect(snapshot.session.id).toBe(sessionId);
  return 1;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function captureError(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected an error');
}
