/**
 * A request that a run stop at its next safe point (before its next provider call: after a tool round, or
 * before its first turn), keeping what it did; `reason` becomes the cancelled run's error message once set.
 */
export interface SafePointStop {
  reason: string | undefined;
}
