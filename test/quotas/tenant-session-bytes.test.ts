import { describe, expect, it } from 'vitest';
import { CodeConfigSchema } from '../../src/config/code-config.js';
import {
  DEFAULT_MAX_SESSION_BYTES_PER_TENANT,
  SESSION_OVERHEAD_BYTES,
  sessionBytesLimit,
} from '../../src/config/session-bytes-limit.js';
import { loadConfig } from '../../src/config/load-config.js';
import { CodeError } from '../../src/errors.js';
import { TenantSessionBytes } from '../../src/runtime/quotas/tenant-session-bytes.js';
import { sessionKey } from '../../src/stores/session-key.js';

function refusal(run: () => void): CodeError {
  try {
    run();
  } catch (error) {
    if (error instanceof CodeError) return error;
    throw error;
  }
  throw new Error('expected QUOTA_EXCEEDED');
}

describe('TenantSessionBytes', () => {
  it('counts per tenant; a session that would pass the limit is QUOTA_EXCEEDED with Retry-After, naming the key', () => {
    const bytes = new TenantSessionBytes(1000);
    const one = {};
    bytes.assertRoom('a', 600);
    bytes.hold(sessionKey('a', 's1'), one, 'a', 500, 100);
    expect(bytes.used('a')).toBe(600);
    const over = refusal(() => bytes.assertRoom('a', 401));
    expect(over).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      status: 429,
      details: {
        quota: 'maxSessionBytesPerTenant',
        limit: 1000,
        used: 600,
        requested: 401,
        tenantId: 'a',
        retryAfterSeconds: 1,
      },
    });
    expect(over.message).toContain('limits.max_session_bytes_per_tenant');
    bytes.assertRoom('a', 400);
    // Another tenant has its own room.
    bytes.assertRoom('b', 1000);
    expect(bytes.snapshot()).toEqual([{ tenantId: 'a', bytes: 600 }]);
  });

  it('re-measures content only for the counted session; release frees everything it held', () => {
    const bytes = new TenantSessionBytes(10_000);
    const key = sessionKey('a', 's1');
    const first = {};
    bytes.hold(key, first, 'a', 500, 0);
    bytes.resize(key, first, 2000);
    expect(bytes.used('a')).toBe(2500);
    // A session replaced under the same key (passivated, hydrated again) is not changed by the old one.
    bytes.release(key, first);
    const second = {};
    bytes.hold(key, second, 'a', 500, 10);
    bytes.resize(key, first, 9000);
    bytes.release(key, first);
    expect(bytes.used('a')).toBe(510);
    bytes.release(key, second);
    expect(bytes.used('a')).toBe(0);
    expect(bytes.snapshot()).toEqual([]);
    // Resizing a session that left changes nothing.
    bytes.resize(key, second, 5000);
    expect(bytes.used('a')).toBe(0);
  });
});

describe('limits.max_session_bytes_per_tenant in the config', () => {
  it('is on with API tokens or quotas (64 MiB), off on a tokenless server unless set', () => {
    const tokens = [{ token: 'token-session-bytes-unit-01', principal: 'p', tenantId: 't', scopes: ['sessions'] }];
    expect(sessionBytesLimit(CodeConfigSchema.parse({}))).toBeUndefined();
    expect(sessionBytesLimit(CodeConfigSchema.parse({ apiTokens: tokens }))).toBe(DEFAULT_MAX_SESSION_BYTES_PER_TENANT);
    expect(DEFAULT_MAX_SESSION_BYTES_PER_TENANT).toBe(64 * 1024 * 1024);
    expect(sessionBytesLimit(CodeConfigSchema.parse({ defaultTenantQuota: { maxOpenSessions: 5 } }))).toBe(
      DEFAULT_MAX_SESSION_BYTES_PER_TENANT,
    );
    expect(sessionBytesLimit(CodeConfigSchema.parse({ limits: { maxSessionBytesPerTenant: 1_000_000 } }))).toBe(
      1_000_000,
    );
  });

  it('refuses values that are no positive integer, or too small for one session of the largest options', () => {
    for (const value of [0, -5, 1.5, 'x'])
      expect(CodeConfigSchema.safeParse({ limits: { maxSessionBytesPerTenant: value } }).success).toBe(false);
    const small = CodeConfigSchema.safeParse({
      limits: { maxSessionOptionsBytes: 4096, maxSessionBytesPerTenant: 4096 + SESSION_OVERHEAD_BYTES - 1 },
    });
    expect(small.success).toBe(false);
    expect(small.error?.issues[0]).toMatchObject({ path: ['limits', 'maxSessionBytesPerTenant'] });
    expect(
      CodeConfigSchema.safeParse({
        limits: { maxSessionOptionsBytes: 4096, maxSessionBytesPerTenant: 4096 + SESSION_OVERHEAD_BYTES },
      }).success,
    ).toBe(true);
  });

  it('is read from the ACL limits block; a bad value fails at startup naming the key', async () => {
    const config = await loadConfig({
      env: {},
      cwd: process.cwd(),
      configText: 'limits {\n  max_session_bytes_per_tenant = 33554432\n}\n',
    });
    expect(config.limits.maxSessionBytesPerTenant).toBe(33_554_432);
    await expect(
      loadConfig({ env: {}, cwd: process.cwd(), configText: 'limits {\n  max_session_bytes_per_tenant = 1000\n}\n' }),
    ).rejects.toThrow(/max_?[sS]ession_?[bB]ytes_?[pP]er_?[tT]enant/);
    await expect(
      loadConfig({ env: {}, cwd: process.cwd(), configText: 'limits {\n  max_session_bytes_per_tenant = "lots"\n}\n' }),
    ).rejects.toThrow(/max_?[sS]ession_?[bB]ytes_?[pP]er_?[tT]enant/);
  });
});
