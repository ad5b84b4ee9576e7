import { SecretRedactor } from '../policy/secret-redactor.js';

/** The redactor of a session with `securityProvider: {type: 'none'}`: tool output (final and live) passes unchanged. */
export class PassthroughRedactor extends SecretRedactor {
  override redact(text: string): { text: string; count: number } {
    return { text, count: 0 };
  }
}

/** The one passthrough redactor (it holds no state). */
export const PASSTHROUGH_REDACTOR = new PassthroughRedactor();
