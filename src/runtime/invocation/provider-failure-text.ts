import type { SecretRedactor } from '../policy/secret-redactor.js';

/** How much of a provider's own error message a run's error keeps. */
export const PROVIDER_MESSAGE_MAX_CHARS = 500;

/**
 * What a run's error says about a provider failure: its status, and the provider's message cut to 500
 * characters and passed through the secret redactor (which knows the configured provider keys). For 401 and
 * 403 only the status: those answers often echo a fragment of the key that was refused.
 */
export function providerFailureText(status: number | undefined, message: string, redactor: SecretRedactor): string {
  if (status === 401 || status === 403)
    return `the provider refused the credentials (HTTP ${status}); check the provider's api_key`;
  const cut =
    message.length > PROVIDER_MESSAGE_MAX_CHARS ? `${message.slice(0, PROVIDER_MESSAGE_MAX_CHARS)}…` : message;
  return redactor.redact(cut).text;
}
