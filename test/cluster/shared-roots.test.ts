import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSharedRoots, ROOT_MARKER, sharedRootsKey } from '../../src/cluster/shared-roots.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { connectRedisTarget, redisServerConfig } from '../support/redis-target.js';
import { startTestServer, tempDir } from '../support/test-server.js';

const freshPrefix = () => `a3s-roots-${Math.random().toString(36).slice(2)}:`;

describe("nodes check at startup that their workspace roots are the cluster's shared storage", () => {
  let redis: Redis | Cluster;
  let fake: FakeProvider;
  beforeAll(async () => {
    redis = connectRedisTarget();
    fake = await startFakeProvider();
  });
  afterAll(async () => {
    redis.disconnect();
    await fake.close();
  });

  it('two nodes on the same root start and agree on its marker; a node whose root lost the marker does not start', async () => {
    const root = tempDir('a3s-shared-root-');
    const redisKeyPrefix = freshPrefix();
    const config = { ...redisServerConfig(), redisKeyPrefix, workspaceRoots: [root] };
    const a = await startTestServer({ fake, config: { ...config, nodeId: 'node-a' } });
    const b = await startTestServer({ fake, config: { ...config, nodeId: 'node-b' } });
    const marker = readFileSync(join(root, ROOT_MARKER), 'utf8');
    expect(marker).toMatch(/^a3s-root v1 [0-9a-f]{32}\n$/);
    expect(await redis.hget(sharedRootsKey(redisKeyPrefix), root)).toBe(marker.trim().split(' ')[2]);
    await b.close();
    await a.close();
    // A fresh local disk mounted where the shared volume should be: same path, no marker.
    rmSync(join(root, ROOT_MARKER));
    const refused = startTestServer({ fake, config: { ...config, nodeId: 'node-c' } });
    await expect(refused).rejects.toMatchObject({
      code: 'SESSION_INITIALIZATION_ERROR',
      details: { resource: 'workspaceRoots', root },
    });
    await expect(refused).rejects.toThrow(/is not the cluster's.*missing here/);
  });

  it('a changes_dir is checked the same way: a node whose changes_dir lacks the marker does not start, naming it', async () => {
    const root = tempDir('a3s-shared-root-');
    const changesDir = tempDir('a3s-shared-changes-');
    const redisKeyPrefix = freshPrefix();
    const config = { ...redisServerConfig(), redisKeyPrefix, workspaceRoots: [root], changesDir };
    const a = await startTestServer({ fake, config: { ...config, nodeId: 'node-a' } });
    const b = await startTestServer({ fake, config: { ...config, nodeId: 'node-b' } });
    const marker = readFileSync(join(changesDir, ROOT_MARKER), 'utf8');
    expect(await redis.hget(sharedRootsKey(redisKeyPrefix), changesDir)).toBe(marker.trim().split(' ')[2]);
    await b.close();
    await a.close();
    // A node-local directory where the shared one should be.
    rmSync(join(changesDir, ROOT_MARKER));
    const refused = startTestServer({ fake, config: { ...config, nodeId: 'node-c' } });
    await expect(refused).rejects.toMatchObject({
      code: 'SESSION_INITIALIZATION_ERROR',
      details: { resource: 'changesDir', root: changesDir },
    });
    await expect(refused).rejects.toThrow(/changes_dir .* is not the cluster's.*missing here/);
  });

  it('nodes starting at the same moment on a fresh root all agree (the marker is linked into place once)', async () => {
    const root = tempDir('a3s-race-root-');
    const keyPrefix = freshPrefix();
    await Promise.all(Array.from({ length: 12 }, () => checkSharedRoots({ redis, keyPrefix, roots: [root] })));
    const token = readFileSync(join(root, ROOT_MARKER), 'utf8').trim().split(' ')[2];
    expect(await redis.hget(sharedRootsKey(keyPrefix), root)).toBe(token);
    // No temporary file is left behind.
    expect(execFileSync('ls', ['-A', root], { encoding: 'utf8' }).trim().split('\n')).toEqual([ROOT_MARKER]);
  });

  it('a marker the model planted is read as untrusted input: links, FIFOs, big files and other tokens are refused without being followed', async () => {
    const keyPrefix = freshPrefix();
    const root = tempDir('a3s-hostile-root-');
    await checkSharedRoots({ redis, keyPrefix, roots: [root] });
    const marker = join(root, ROOT_MARKER);
    const original = readFileSync(marker, 'utf8');
    const attempts: Array<[string, () => void, RegExp]> = [
      [
        'a link to /proc/self/environ',
        () => symlinkSync('/proc/self/environ', marker),
        /cannot be opened as a plain file \(ELOOP\)/,
      ],
      [
        'a link to the data dir',
        () => symlinkSync(tempDir('a3s-data-'), marker),
        /cannot be opened as a plain file \(ELOOP\)/,
      ],
      ['a FIFO (would block a reader)', () => execFileSync('mkfifo', [marker]), /not a small regular file/],
      ['a large file', () => writeFileSync(marker, 'a3s-root v1 '.padEnd(4096, '0')), /not a small regular file/],
      [
        'another token',
        () => writeFileSync(marker, `a3s-root v1 ${'f'.repeat(32)}\n`),
        /differs from the one other nodes found there/,
      ],
      ['garbage', () => writeFileSync(marker, 'PATH=/usr/bin\n'), /not one this server wrote/],
    ];
    for (const [what, plant, expected] of attempts) {
      rmSync(marker, { force: true });
      plant();
      const check = checkSharedRoots({ redis, keyPrefix, roots: [root] });
      await expect(check, what).rejects.toThrow(expected);
      // Nothing of what a link pointed at reaches the message.
      await expect(check, what).rejects.not.toThrow(/PATH=|HOME=/);
    }
    rmSync(marker, { force: true });
    writeFileSync(marker, original);
    await checkSharedRoots({ redis, keyPrefix, roots: [root] });
  });
});
