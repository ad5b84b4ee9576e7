import { describe, expect, it } from 'vitest';
import { ConfigError, type ConfigProblem } from '../../src/config/config-error.js';
import { loadConfig } from '../../src/config/load-config.js';
import { DEFAULT_WEBHOOK_RETRY_DELAYS_MS } from '../../src/config/webhook-config.js';

async function problemsOf(configText: string): Promise<readonly ConfigProblem[]> {
  const error = await loadConfig({ env: {}, cwd: '/', configText }).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).problems;
}

describe('webhooks {} config', () => {
  it('defaults to no secrets and the issue schedule: 0 s, 10 s, 1 min, 5 min, 30 min, 2 h, 10 s per attempt', async () => {
    const config = await loadConfig({ env: {}, cwd: '/' });
    expect(config.webhooks).toEqual({
      secrets: {},
      retryDelaysMs: [0, 10_000, 60_000, 300_000, 1_800_000, 7_200_000],
      attemptTimeoutMs: 10_000,
      claimTtlMs: 20_000,
      scanIntervalMs: 5000,
    });
    expect(DEFAULT_WEBHOOK_RETRY_DELAYS_MS).toEqual(config.webhooks.retryDelaysMs);
  });

  it('keeps tenant ids verbatim (snake_case ones too) and reads env() secrets', async () => {
    const config = await loadConfig({
      env: { ACME_SECRET: 'acme-secret-0123456789abcdef' },
      cwd: '/',
      configText: `webhooks {
  secrets = {
    "acme_corp" = [env("ACME_SECRET"), "acme-retired-0123456789"]
  }
  retry_delays_ms = [0, 5000]
  attempt_timeout_ms = 2000
}
`,
    });
    expect(config.webhooks.secrets).toEqual({ acme_corp: ['acme-secret-0123456789abcdef', 'acme-retired-0123456789'] });
    expect(config.webhooks).toMatchObject({ retryDelaysMs: [0, 5000], attemptTimeoutMs: 2000 });
  });

  it('refuses short secrets, three of them, a decreasing schedule and a claim no longer than an attempt, naming each', async () => {
    const problems = await problemsOf(`webhooks {
  secrets = {
    "a" = ["short"]
    "b" = ["b-one-0123456789abcdef", "b-two-0123456789abcdef", "b-three-0123456789abcdef"]
  }
  retry_delays_ms = [0, 5000, 1000]
}
`);
    const text = problems.map((p) => `${p.path ?? ''}: ${p.message}`).join('\n');
    expect(text).toMatch(/at least 16 characters/);
    expect(text).toMatch(/at most two secrets per tenant/);
    expect(text).toMatch(/retry_delays_ms must not decrease/);
    const claim = await problemsOf('webhooks {\n  attempt_timeout_ms = 30000\n}\n');
    expect(claim.map((p) => p.message).join('\n')).toMatch(
      /claim_ttl_ms must be longer than webhooks.attempt_timeout_ms/,
    );
  });
});
