import { randomUUID } from 'node:crypto';
import { linkSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AttachmentRef } from '../../src/protocol/attachments.js';
import type { ToolContext, ToolImages, ToolResult } from '../../src/runtime/tools/define-tool.js';
import { readTool } from '../../src/runtime/tools/builtin/read.js';
import { fileSwapBody, startSwapLoop } from '../support/swap-loop.js';
import { createTestWorkspace, runTool, type TestWorkspace } from './tool-test-context.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const SECRET = `other-session-image-${randomUUID()}`;
const ENV_MARKER = `read-image-env-marker-${randomUUID()}`;
const ENV_NAME = 'A3S_READ_IMAGE_RACE_MARKER';
const RACE_MS = 3000;
const WAVE = 32;

let ws: TestWorkspace;
let stored: Buffer[];
beforeAll(() => {
  process.env[ENV_NAME] = ENV_MARKER;
});
afterAll(() => {
  delete process.env[ENV_NAME];
});
beforeEach(() => {
  ws = createTestWorkspace();
  stored = [];
  // ws.outside stands for the data dir: another session's stored image (a valid PNG, with a secret after it).
  mkdirSync(path.join(ws.outside, 'attachments', 'tenant', 'other'), { recursive: true });
  writeFileSync(
    path.join(ws.outside, 'attachments', 'tenant', 'other', 'att.bin'),
    Buffer.concat([PNG, Buffer.from(SECRET)]),
  );
  writeFileSync(path.join(ws.root, 'image.png'), PNG);
  linkSync(path.join(ws.root, 'image.png'), path.join(ws.root, '.keep-image.png'));
});
afterEach(() => ws.cleanup());

function images(maxBytes = 1 << 20): ToolImages {
  return {
    accepted: true,
    maxBytes,
    store: async (mediaType, name, data) => {
      stored.push(Buffer.from(data));
      const ref: AttachmentRef = {
        attachmentId: `att_${randomUUID().replace(/-/g, '')}`,
        type: 'image',
        mediaType,
        name,
        bytes: data.length,
        sha256: 'sha256:0',
      };
      return ref;
    },
  };
}

async function readImage(ctx: ToolContext): Promise<ToolResult> {
  try {
    return await runTool(readTool, { file_path: 'image.png' }, ctx);
  } finally {
    ctx.files.release();
  }
}

describe('read of an image while its name is swapped (mv -T loop)', () => {
  it('only the workspace image is ever read and stored, never /etc/passwd, /proc/self/environ or another session', async () => {
    const links = [
      '/etc/passwd',
      '/proc/self/environ',
      path.join(ws.outside, 'attachments', 'tenant', 'other', 'att.bin'),
      path.join(ws.outside, 'attachments'),
    ];
    const loop = startSwapLoop(ws.root, fileSwapBody('image.png', links, 0.005), { [ENV_NAME]: ENV_MARKER });
    const results: ToolResult[] = [];
    let rounds = 0;
    try {
      const end = Date.now() + RACE_MS;
      while (Date.now() < end)
        results.push(
          ...(await Promise.all(Array.from({ length: WAVE }, () => readImage({ ...ws.context(), images: images() })))),
        );
    } finally {
      rounds = await loop.stop();
      rmSync(path.join(ws.root, 'image.png'), { force: true });
      linkSync(path.join(ws.root, '.keep-image.png'), path.join(ws.root, 'image.png'));
    }
    expect(rounds).toBeGreaterThan(10);
    const returned = results.filter((r) => r.images !== undefined);
    const refused = results.filter((r) => r.images === undefined);
    // Both sides of the race were met: the image was returned, and a swapped name was refused.
    expect(returned.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    expect(stored).toHaveLength(returned.length);
    for (const data of stored) expect(data.equals(PNG)).toBe(true);
    for (const result of results) {
      const text = JSON.stringify(result);
      expect(text).not.toContain('root:x:0:0');
      expect(text).not.toContain(ENV_MARKER);
      expect(text).not.toContain(SECRET);
      if (result.images === undefined) expect(result.exitCode).toBe(1);
    }
  }, 20_000);

  it('an image over the bound is refused before its bytes are read', async () => {
    writeFileSync(path.join(ws.root, 'image.png'), Buffer.concat([PNG, Buffer.alloc(200)]));
    const ctx = { ...ws.context(), images: images(PNG.length + 100) };
    const result = await readImage(ctx);
    expect(result.exitCode).toBe(1);
    expect(result.output).toMatch(/over limits\.maxAttachmentBytes \(\d+ bytes\); it was not sent/);
    expect(stored).toEqual([]);
  });

  it('without ctx.images (a host call, or inside batch or program) an image is not returned', async () => {
    const result = await readImage(ws.context());
    expect(result).toMatchObject({ exitCode: 1, metadata: { reason: 'image_not_returned', media_type: 'image/png' } });
    expect(result.images).toBeUndefined();
  });
});
