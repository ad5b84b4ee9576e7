/** The patch a diff wrote: its size and digest, and its bytes when it is at most maxPatchBytes. */
export interface CapturedPatch {
  readonly bytes: number;
  readonly digest: string;
  readonly data: Buffer | undefined;
}

/** Why capture did not run or failed: `commands_refused` (no sandbox, no host commands), `too_many_files`, `failed`. */
export class CaptureError extends Error {
  override readonly name = 'CaptureError';
  constructor(
    readonly reason: 'commands_refused' | 'too_many_files' | 'failed' | 'tree_missing',
    message: string,
  ) {
    super(message);
  }
}
