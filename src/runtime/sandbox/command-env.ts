import { CodeError } from '../../errors.js';

/** Where contained commands find programs (merged /usr: /bin and /sbin are links into /usr). */
export const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin';

/** Most variables SessionOptions.commandEnv may add. */
export const MAX_COMMAND_ENV_VARS = 64;
/** Longest value of one commandEnv variable. */
export const MAX_COMMAND_ENV_VALUE = 4096;

/**
 * Names commandEnv may not set: the ones the sandbox itself decides (PATH, HOME, TMPDIR, the GIT_* that
 * keep git non-interactive and confined) and those that make a shell or the loader run code on start.
 */
const RESERVED =
  /^(PATH|HOME|TMPDIR|USER|LOGNAME|SHELL|PWD|OLDPWD|IFS|ENV|BASH_ENV|BASHOPTS|SHELLOPTS|PS4|PROMPT_COMMAND|NODE_OPTIONS|LD_.*|GIT_.*|BASH_FUNC_.*)$/;

/** The names of commandEnv that are refused, with the reason, or undefined when all are acceptable. */
export function commandEnvProblem(
  env: Readonly<Record<string, string>>,
): { field: string; message: string } | undefined {
  const names = Object.keys(env);
  if (names.length > MAX_COMMAND_ENV_VARS)
    return { field: 'commandEnv', message: `at most ${MAX_COMMAND_ENV_VARS} variables (got ${names.length})` };
  for (const name of names) {
    if (RESERVED.test(name))
      return {
        field: `commandEnv.${name}`,
        message: `"${name}" is set by the sandbox (PATH, HOME, TMPDIR, GIT_*, LD_*, shell start-up variables) and cannot be overridden`,
      };
    const value = env[name] as string;
    if (value.length > MAX_COMMAND_ENV_VALUE)
      return { field: `commandEnv.${name}`, message: `value longer than ${MAX_COMMAND_ENV_VALUE} characters` };
    if (value.includes('\0')) return { field: `commandEnv.${name}`, message: 'value contains a NUL character' };
  }
  return undefined;
}

/** Throw SESSION_CONFIGURATION_ERROR naming the field when commandEnv is refused. */
export function assertCommandEnv(env: Readonly<Record<string, string>> | undefined): void {
  const problem = env ? commandEnvProblem(env) : undefined;
  if (problem)
    throw new CodeError('SESSION_CONFIGURATION_ERROR', `${problem.field}: ${problem.message}`, {
      field: problem.field,
    });
}

/**
 * The environment of a model-chosen command, built from scratch: never anything of the server's own
 * (no provider keys, tokens, REDIS_URL or DATABASE_URL), just what programs need to run non-interactively.
 */
export function commandEnvironment(
  home: string,
  tmp: string,
  extra: Readonly<Record<string, string>>,
  searchPath: string = SANDBOX_PATH,
): Record<string, string> {
  return {
    ...extra,
    PATH: searchPath,
    HOME: home,
    TMPDIR: tmp,
    USER: 'sandbox',
    LOGNAME: 'sandbox',
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    GIT_EDITOR: 'true',
  };
}
