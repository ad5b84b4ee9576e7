import { describe, expect, it } from 'vitest';
import { chatCompletionsUrl, providerChatUrl } from '../../src/runtime/llm/chat-completions-url.js';

describe('chatCompletionsUrl (the seed meaning of base_url)', () => {
  it.each([
    ['http://127.0.0.1:4000', undefined, 'http://127.0.0.1:4000/v1/chat/completions'],
    ['http://127.0.0.1:4000/', undefined, 'http://127.0.0.1:4000/v1/chat/completions'],
    ['https://api.openai.com/v1', undefined, 'https://api.openai.com/v1/chat/completions'],
    ['https://api.openai.com/v1/', undefined, 'https://api.openai.com/v1/chat/completions'],
    ['https://gw.example/openai', undefined, 'https://gw.example/openai/v1/chat/completions'],
    ['https://open.bigmodel.cn/api/paas/v4', undefined, 'https://open.bigmodel.cn/api/paas/v4/chat/completions'],
    ['https://host.example/v3', undefined, 'https://host.example/v3/chat/completions'],
    ['https://host.example/v1/chat/completions', undefined, 'https://host.example/v1/chat/completions'],
    ['http://127.0.0.1:4000', '/chat/completions', 'http://127.0.0.1:4000/chat/completions'],
    ['http://127.0.0.1:4000/v1', '/chat/completions', 'http://127.0.0.1:4000/chat/completions'],
    ['http://127.0.0.1:4000', 'openai/deployments/x/chat', 'http://127.0.0.1:4000/openai/deployments/x/chat'],
  ])('%s with path %s -> %s', (base, path, url) => {
    expect(chatCompletionsUrl(base, path)).toBe(url);
  });

  it('prefers a full chatCompletionsUrl, and leaves the SDK default when nothing is set', () => {
    expect(providerChatUrl({ baseUrl: 'http://a', chatCompletionsUrl: 'http://b/v1/chat/completions' })).toBe(
      'http://b/v1/chat/completions',
    );
    expect(providerChatUrl({ baseUrl: 'http://a' })).toBe('http://a/v1/chat/completions');
    expect(providerChatUrl({ chatCompletionsPath: '/x/chat' })).toBe('https://api.openai.com/x/chat');
    expect(providerChatUrl({})).toBeUndefined();
  });
});
