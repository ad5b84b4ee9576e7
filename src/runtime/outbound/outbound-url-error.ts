/** Why an outbound URL was refused. */
export type OutboundRefusal = 'invalid_url' | 'scheme' | 'credentials' | 'private_address' | 'unresolvable';

/** An outbound URL the server will not call: the refusal kind and a message naming the URL's problem. */
export class OutboundUrlError extends Error {
  readonly refusal: OutboundRefusal;

  constructor(refusal: OutboundRefusal, message: string) {
    super(message);
    this.name = 'OutboundUrlError';
    this.refusal = refusal;
  }
}
