import path from 'node:path';
import type { CodeConfig } from '../config/code-config.js';
import { providerChatUrl } from '../runtime/llm/chat-completions-url.js';

/** What the server says it runs with when it starts, so a newcomer sees where sessions land and who may call. */
export interface StartupSummary {
  /** The fields of the "listening" info line. */
  fields: Record<string, unknown>;
  /** Warn lines: settings that work but are probably not what was meant. */
  warnings: string[];
}

/**
 * The one startup summary: provider and model, store, sandbox, auth mode and workspace roots; a warning when no
 * workspace root is the working directory (the default: sessions then work in the server's own directory).
 */
export function startupSummary(
  config: CodeConfig,
  running: { url: string; store: string; sandbox: { kind: string; mode: string } },
  cwd: string,
): StartupSummary {
  const providerName = config.defaultModel.split('/')[0] ?? '';
  const provider = config.providers[providerName];
  const endpoint = provider ? (providerChatUrl(provider) ?? 'https://api.openai.com/v1/chat/completions') : undefined;
  const roots = config.workspaceRoots ?? [cwd];
  const auth =
    config.apiTokens.length > 0
      ? `tokens (${config.apiTokens.length})`
      : 'none: bound to loopback only, every caller has every scope';
  const warnings: string[] = [];
  // workspace_roots defaults to the working directory (loadConfig resolves it): said once, since a server started
  // from its own checkout would otherwise show a first session its own source.
  if (roots.length === 1 && path.resolve(roots[0] ?? '') === path.resolve(cwd))
    warnings.push(
      `the workspace root is this server's working directory ${cwd} (the default of workspace_roots): sessions work there unless they name another directory; set workspace_roots or A3S_WORKSPACE_ROOTS`,
    );
  return {
    fields: {
      url: running.url,
      model: config.defaultModel,
      provider: providerName,
      ...(endpoint !== undefined ? { providerUrl: endpoint } : {}),
      store: running.store,
      sandbox: `${running.sandbox.kind} (mode ${running.sandbox.mode})`,
      auth,
      workspaceRoots: roots,
    },
    warnings,
  };
}
