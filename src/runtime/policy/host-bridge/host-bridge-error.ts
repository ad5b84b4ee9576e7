/** Why a host did not give a usable answer. */
export type HostBridgeFailure =
  | 'timeout'
  | 'aborted'
  | 'network'
  | 'http_status'
  | 'bad_response'
  | 'invalid_endpoint'
  | 'unknown_connection'
  | 'disconnected'
  | 'overloaded'
  | 'send_failed';

/** A failed host request: the failure kind and a message naming it (never an answer the caller should act on). */
export class HostBridgeError extends Error {
  readonly failure: HostBridgeFailure;

  constructor(failure: HostBridgeFailure, message: string) {
    super(message);
    this.name = 'HostBridgeError';
    this.failure = failure;
  }
}

/** The failure kind and message of any thrown value (non-bridge errors count as network failures). */
export function describeHostFailure(error: unknown): { failure: HostBridgeFailure; message: string } {
  if (error instanceof HostBridgeError) return { failure: error.failure, message: error.message };
  return { failure: 'network', message: error instanceof Error ? error.message : String(error) };
}
