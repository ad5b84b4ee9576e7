import type { RunErrorCode } from '../../errors.js';
import { LlmProviderError } from '../llm/llm-provider.js';

/** The longest wait a provider's Retry-After may ask for; a longer one is cut to this. */
export const MAX_RETRY_AFTER_MS = 30_000;

/** The first backoff without Retry-After; it doubles each retry, up to MAX_BACKOFF_MS. */
export const BASE_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 5_000;

/** How long to wait before retry `attempt` (1-based): the provider's Retry-After (capped), else exponential backoff. */
export function retryDelayMs(error: LlmProviderError, attempt: number): number {
  if (error.retryAfterMs !== undefined) return Math.min(error.retryAfterMs, MAX_RETRY_AFTER_MS);
  return Math.min(BASE_BACKOFF_MS * 2 ** (attempt - 1), MAX_BACKOFF_MS);
}

/**
 * A provider call that failed for good: PROVIDER_ERROR (not retryable, output had started, or the retries
 * were spent) or CIRCUIT_BREAKER_OPEN (circuitBreakerThreshold calls in a row failed so). Still an
 * LlmProviderError, so callers that tolerate a failed helper call keep doing so.
 */
export class ProviderCallError extends LlmProviderError {
  constructor(
    readonly code: Extract<RunErrorCode, 'PROVIDER_ERROR' | 'CIRCUIT_BREAKER_OPEN'>,
    message: string,
    status: number | undefined,
    /** The requests this call made. */
    readonly requests: number,
  ) {
    super(message, status, false);
    this.name = 'ProviderCallError';
  }
}
