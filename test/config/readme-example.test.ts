import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { tempDir } from '../support/test-server.js';

describe('README configuration example', () => {
  it('loads as documented', async () => {
    const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
    const block = /```hcl\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const dir = tempDir('a3s-readme-');
    const file = join(dir, 'a3s.hcl');
    writeFileSync(file, block ?? '');
    const config = await loadConfig({ env: { OPENAI_API_KEY: 'sk-readme', A3S_CONFIG: file }, cwd: dir });
    expect(config.defaultModel).toBe('openai/gpt-4o');
    expect(config.providers.openai).toMatchObject({ apiKey: 'sk-readme', baseUrl: 'https://api.openai.com/v1' });
    expect(config.providers.openai.models['gpt-4o']).toMatchObject({ contextWindow: 128000, maxTokens: 4096 });
    expect(config.loop.maxToolRounds).toBe(40);
    expect(config.apiTokens).toEqual([{ tokenSha256: expect.stringMatching(/^[0-9a-f]{64}$/), principal: 'ci-bot', tenantId: 'acme', scopes: ['sessions', 'host_direct'] }]);
  });
});
