import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import type { CodeConfig } from '../../src/config/code-config.js';
import { tempDir } from '../support/test-server.js';

/** Every ```hcl block of docs/configuration.md (README's configuration examples moved there), in order. */
function hclBlocks(): string[] {
  const readme = readFileSync(join(process.cwd(), 'docs', 'configuration.md'), 'utf8');
  return [...readme.matchAll(/```hcl\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
}

async function load(block: string): Promise<CodeConfig> {
  const dir = tempDir('a3s-readme-');
  const file = join(dir, 'a3s.hcl');
  writeFileSync(file, block);
  return loadConfig({ env: { OPENAI_API_KEY: 'sk-readme', A3S_CONFIG: file }, cwd: dir });
}

describe('README configuration examples', () => {
  it('every ACL block loads', async () => {
    const blocks = hclBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    for (const block of blocks) await expect(load(block), block.slice(0, 80)).resolves.toBeDefined();
  });

  it("the seed's own ACL loads as documented: the model key is the id, base_url the provider root", async () => {
    const block = hclBlocks().find((b) => b.includes('docs-fake'));
    const config = await load(block ?? '');
    expect(config.defaultModel).toBe('openai/docs-fake');
    expect(config.providers.openai).toMatchObject({ baseUrl: 'http://127.0.0.1:4000' });
    expect(config.providers.openai.models['docs-alt']).toMatchObject({ name: 'Docs Alt', toolCall: true });
    expect(config.storageBackend).toBe('file');
  });

  it('the configuration example loads as documented', async () => {
    const block = hclBlocks().find((b) => b.includes('gpt-4o'));
    const config = await load(block ?? '');
    expect(config.defaultModel).toBe('openai/gpt-4o');
    expect(config.providers.openai).toMatchObject({ apiKey: 'sk-readme', baseUrl: 'https://api.openai.com/v1' });
    expect(config.providers.openai.models['gpt-4o']).toMatchObject({ contextWindow: 128000, maxTokens: 4096 });
    expect(config.loop.maxToolRounds).toBe(40);
    expect(config.apiTokens).toEqual([
      {
        tokenSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        principal: 'ci-bot',
        tenantId: 'acme',
        scopes: ['sessions', 'host_direct'],
      },
    ]);
  });
});
