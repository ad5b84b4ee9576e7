import type { ConfigProblem } from './config-error.js';
import { formatPath } from './hcl-parser.js';

/** The source named by problems with no file line or env variable. */
export const DEFAULTS_SOURCE = '(defaults)';

/** Tracks where each value came from so a problem can name its file line or env variable. */
export class Provenance {
  readonly envSources = new Map<string, string>();

  constructor(
    readonly file: string | undefined,
    readonly lines: Map<string, number>,
  ) {}

  /** Marks `segments` (and everything below) as coming from env variable `name`. */
  fromEnv(segments: readonly (string | number)[], name: string): void {
    const prefix = formatPath(segments);
    for (const key of [...this.lines.keys(), ...this.envSources.keys()]) {
      if (key === prefix || key.startsWith(`${prefix}.`) || key.startsWith(`${prefix}[`)) {
        this.lines.delete(key);
        this.envSources.delete(key);
      }
    }
    this.envSources.set(prefix, name);
  }

  /** The source and line of the closest recorded ancestor of a field path. */
  locate(segments: readonly PropertyKey[]): { source: string; line?: number } {
    for (let n = segments.length; n > 0; n--) {
      const key = formatPath(segments.slice(0, n));
      const envName = this.envSources.get(key);
      if (envName !== undefined) return { source: envName };
      const line = this.lines.get(key);
      if (line !== undefined && this.file !== undefined) return { source: this.file, line };
    }
    return { source: this.file ?? DEFAULTS_SOURCE };
  }

  /** A problem at a field path, located at its file line or env variable. */
  problem(segments: readonly PropertyKey[], message: string): ConfigProblem {
    return { ...this.locate(segments), path: formatPath(segments), message };
  }
}
