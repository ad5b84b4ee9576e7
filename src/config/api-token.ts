import { z } from 'zod';

/** Scopes a bearer token may carry. */
export const ScopeSchema = z.enum(['sessions', 'host_direct', 'admin']);

/** A scope. */
export type Scope = z.infer<typeof ScopeSchema>;

/** One API token: either the token itself or its SHA-256 hex digest (config files). */
export const ApiTokenSchema = z
  .object({
    token: z.string().min(16, 'token must be at least 16 characters').optional(),
    tokenSha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'tokenSha256 must be 64 lowercase hex characters')
      .optional(),
    principal: z.string().min(1),
    tenantId: z.string().min(1),
    scopes: z.array(ScopeSchema).min(1),
  })
  .strict()
  .refine((t) => (t.token === undefined) !== (t.tokenSha256 === undefined), {
    message: 'exactly one of token or tokenSha256 must be set',
  });

/** A configured API token. */
export type ApiToken = z.infer<typeof ApiTokenSchema>;

/** Tenant ids that name their own directory under a workspace root (letters, digits, "_", "." and "-", not starting with "."). */
export const SAFE_TENANT_ID = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;

/** What SAFE_TENANT_ID asks for, in words. */
export const SAFE_TENANT_ID_RULE =
  'with tokens of more than one tenant, a tenantId names the tenant\'s directory under each workspace root: 1-128 letters, digits, "_", "." or "-", not starting with "."';
