/** Why a checked web request failed before a usable response arrived. */
export type WebRequestFailure = 'refused' | 'redirect' | 'too_many_redirects' | 'network';

/** A web request the server would not make or could not complete: the failure kind and a message naming the URL's problem. */
export class WebRequestError extends Error {
  readonly failure: WebRequestFailure;

  constructor(failure: WebRequestFailure, message: string) {
    super(message);
    this.name = 'WebRequestError';
    this.failure = failure;
  }
}
