import { createHash, randomBytes } from 'node:crypto';
import { ScopeSchema, SAFE_TENANT_ID, type Scope } from '../config/api-token.js';
import type { CliIo } from './cli-io.js';
import { EXIT } from './exit-codes.js';
import { booleanFlag, parseFlags, stringFlag, stringList, type FlagSpec } from './parse-flags.js';
import { UsageError } from './usage-error.js';

/** The flags of `a3s token new` (besides the global ones). */
export const TOKEN_FLAGS = {
  principal: { type: 'string' },
  tenant: { type: 'string' },
  scope: { type: 'string', multiple: true },
  json: { type: 'boolean' },
} as const satisfies FlagSpec;

/** A new API token: 32 random bytes, base64url, with a prefix that says what it is (and what scanners can find). */
export function newApiToken(): { token: string; tokenSha256: string } {
  const token = `a3s_${randomBytes(32).toString('base64url')}`;
  return { token, tokenSha256: createHash('sha256').update(token).digest('hex') };
}

/**
 * `a3s token new [--principal P] [--tenant T] [--scope S]...`: makes a random token and prints it once, with the
 * `api_token {}` block for the server's config that holds only its SHA-256 (the server never needs the token
 * itself). Runs locally: no server is asked.
 */
export async function tokenCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags('token', args, TOKEN_FLAGS);
  if (positionals[0] !== 'new' || positionals.length !== 1)
    throw new UsageError(
      positionals.length === 0 ? 'missing "new"' : `unknown token command "${positionals.join(' ')}" (new)`,
      'token',
    );
  const principal = stringFlag(values, 'principal') ?? 'local';
  const tenantId = stringFlag(values, 'tenant') ?? 'default';
  if (!SAFE_TENANT_ID.test(tenantId))
    throw new UsageError(
      `--tenant must be 1-128 letters, digits, "_", "." or "-", not starting with ".", got "${tenantId}"`,
      'token',
    );
  const scopes: Scope[] = [];
  for (const raw of stringList(values, 'scope').length > 0 ? stringList(values, 'scope') : ['sessions']) {
    const parsed = ScopeSchema.safeParse(raw);
    if (!parsed.success) throw new UsageError(`--scope must be sessions, host_direct or admin, got "${raw}"`, 'token');
    if (!scopes.includes(parsed.data)) scopes.push(parsed.data);
  }
  const { token, tokenSha256 } = newApiToken();
  if (booleanFlag(values, 'json')) {
    io.out(`${JSON.stringify({ token, tokenSha256, principal, tenantId, scopes })}\n`);
    return EXIT.ok;
  }
  io.out(
    [
      `token: ${token}`,
      '',
      '# add to the server config (it holds only the hash); give the token to the client (A3S_TOKEN)',
      'api_token {',
      `  token_sha256 = "${tokenSha256}"`,
      `  principal    = ${JSON.stringify(principal)}`,
      `  tenant_id    = ${JSON.stringify(tenantId)}`,
      `  scopes       = [${scopes.map((s) => JSON.stringify(s)).join(', ')}]`,
      '}',
      '',
    ].join('\n'),
  );
  return EXIT.ok;
}
