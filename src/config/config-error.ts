/** One configuration problem: its source (a file or an env variable), the line when known, the field path and what is wrong. */
export interface ConfigProblem {
  source: string;
  line?: number;
  column?: number;
  path?: string;
  message: string;
}

/** Formats one problem as `<source>:<line>: <field.path>: <message>` (line and path only when known). */
export function formatConfigProblem(problem: ConfigProblem): string {
  const line =
    problem.line === undefined ? '' : `:${problem.line}${problem.column === undefined ? '' : `:${problem.column}`}`;
  const field = problem.path === undefined || problem.path === '' ? '' : `${problem.path}: `;
  return `${problem.source}${line}: ${field}${problem.message}`;
}

/** Formats a list of problems as the multi-line message of a ConfigError. */
export function formatConfigError(problems: readonly ConfigProblem[]): string {
  const head = `invalid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'}):`;
  return [head, ...problems.map((p) => `  ${formatConfigProblem(p)}`)].join('\n');
}

/** Every problem found while loading the configuration, listed in one message. */
export class ConfigError extends Error {
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[]) {
    super(formatConfigError(problems));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}
