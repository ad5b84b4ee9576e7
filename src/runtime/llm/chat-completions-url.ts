/** The chat path appended to a provider's `base_url` unless `chat_completions_path` replaces it. */
export const DEFAULT_CHAT_COMPLETIONS_PATH = '/v1/chat/completions';

/**
 * The chat-completions URL of a provider, with the seed's meaning of `base_url`: the provider's root, so a
 * trailing `/` and one trailing `/v1` are dropped and `path` (default `/v1/chat/completions`) is appended.
 * A base that already ends in `/chat/completions` is the URL itself; a base at a versioned API root other
 * than v1 (`.../v4`, or one containing `/api/`) gets the default path without its `/v1`.
 */
export function chatCompletionsUrl(baseUrl: string, path: string = DEFAULT_CHAT_COMPLETIONS_PATH): string {
  const base = baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '').replace(/\/+$/, '');
  if (base.endsWith('/chat/completions')) return base;
  let suffix = path.startsWith('/') ? path : `/${path}`;
  if (suffix.startsWith('/v1/') && (/\/v[2-9]$/.test(base) || new URL(base).pathname.includes('/api/')))
    suffix = suffix.slice(3);
  return `${base}${suffix}`;
}

/** What a provider's configuration says about where its chat completions go. */
export interface ProviderEndpointSettings {
  baseUrl?: string;
  chatCompletionsPath?: string;
  chatCompletionsUrl?: string;
}

/**
 * A provider's chat-completions URL: `chatCompletionsUrl` as given, else `baseUrl` (seed meaning) with
 * `chatCompletionsPath`, else the OpenAI API at `https://api.openai.com` with that path when only a path is
 * set; undefined leaves the openai SDK's default.
 */
export function providerChatUrl(settings: ProviderEndpointSettings): string | undefined {
  if (settings.chatCompletionsUrl !== undefined) return settings.chatCompletionsUrl;
  if (settings.baseUrl !== undefined) return chatCompletionsUrl(settings.baseUrl, settings.chatCompletionsPath);
  if (settings.chatCompletionsPath !== undefined)
    return chatCompletionsUrl('https://api.openai.com', settings.chatCompletionsPath);
  return undefined;
}
