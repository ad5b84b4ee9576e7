/** A syntax or evaluation error with the 1-based line and column where it was found. */
export class HclParseError extends Error {
  readonly line: number;
  readonly column: number;
  readonly reason: string;

  constructor(reason: string, line: number, column: number) {
    super(`${reason} (line ${line}, column ${column})`);
    this.name = 'HclParseError';
    this.reason = reason;
    this.line = line;
    this.column = column;
  }
}
