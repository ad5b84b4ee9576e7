import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { formatZodIssues } from '../protocol/format-zod-issues.js';
import type { CliIo } from './cli-io.js';
import { booleanFlag, stringFlag, type FlagValues } from './parse-flags.js';
import { UsageError } from './usage-error.js';

/** The server URL when neither a flag, A3S_URL nor the config file names one. */
export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** `~/.config/a3s/cli.json` (or `$XDG_CONFIG_HOME/a3s/cli.json`): the server and its token, both optional. */
export const CliConfigFileSchema = z
  .object({
    url: z.string().min(1, 'url must not be empty').optional(),
    token: z.string().min(1, 'token must not be empty').optional(),
  })
  .strict();

/** Where the CLI talks to: the server's base URL and the bearer token (none for an anonymous loopback server). */
export interface CliConfig {
  url: string;
  token: string | undefined;
  /** 'no-forward' (--no-forward or A3S_ROUTE=no-forward): cluster nodes answer 421 and the client follows it once. */
  route: 'forward' | 'no-forward';
}

/** The route from --no-forward, else A3S_ROUTE ("forward" or "no-forward"; anything else is a UsageError). */
export function resolveRoute(values: FlagValues, env: CliIo['env']): CliConfig['route'] {
  if (booleanFlag(values, 'no-forward')) return 'no-forward';
  const value = env.A3S_ROUTE;
  if (value === undefined || value === '' || value === 'forward') return 'forward';
  if (value === 'no-forward') return 'no-forward';
  throw new UsageError(`A3S_ROUTE must be "forward" or "no-forward", got "${value}"`);
}

/** The config file's path for this environment. */
export function configFilePath(io: Pick<CliIo, 'env' | 'home'>): string {
  const base =
    io.env.XDG_CONFIG_HOME && io.env.XDG_CONFIG_HOME.length > 0 ? io.env.XDG_CONFIG_HOME : join(io.home, '.config');
  return join(base, 'a3s', 'cli.json');
}

function readConfigFile(path: string): z.infer<typeof CliConfigFileSchema> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new UsageError(`cannot read ${path}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path}: not valid JSON: ${(error as Error).message}`);
  }
  const parsed = CliConfigFileSchema.safeParse(json);
  if (!parsed.success) throw new UsageError(`${path}: ${formatZodIssues(parsed.error)}`);
  return parsed.data;
}

/** True for a loopback host: localhost, 127.0.0.0/8 or ::1 (where the server accepts anonymous requests). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Resolve the server, token and route: flags (`--url`, `--token`, `--no-forward`) over the environment (A3S_URL,
 * A3S_TOKEN, A3S_ROUTE) over the config file; the URL defaults to DEFAULT_URL. A bad URL, a bad config file, or no token for a server that is not
 * on a loopback address is a UsageError (exit 2).
 */
export function resolveCliConfig(values: FlagValues, io: Pick<CliIo, 'env' | 'home'>): CliConfig {
  const nonEmpty = (value: string | undefined): string | undefined =>
    value !== undefined && value.length > 0 ? value : undefined;
  const flagUrl = stringFlag(values, 'url');
  const flagToken = stringFlag(values, 'token');
  const needFile =
    (flagUrl ?? nonEmpty(io.env.A3S_URL)) === undefined || (flagToken ?? nonEmpty(io.env.A3S_TOKEN)) === undefined;
  const path = configFilePath(io);
  const file = needFile ? readConfigFile(path) : {};
  const url = flagUrl ?? nonEmpty(io.env.A3S_URL) ?? file.url ?? DEFAULT_URL;
  const token = flagToken ?? nonEmpty(io.env.A3S_TOKEN) ?? file.token;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`the server URL "${url}" is not a valid URL (set --url, A3S_URL or "url" in ${path})`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`the server URL "${url}" must start with http:// or https://`);
  if (token === undefined && !isLoopbackHost(parsed.hostname)) {
    throw new UsageError(
      `no token for ${parsed.origin}: a server off the loopback address needs one; set A3S_TOKEN, pass --token, or put "token" in ${path}`,
    );
  }
  return { url: url.replace(/\/+$/, ''), token, route: resolveRoute(values, io.env) };
}
