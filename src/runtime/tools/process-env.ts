// Names of environment variables that look like credentials (`*_API_KEY`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`).
const SECRET_NAME = [/_API_KEY$/i, /^API_KEY$/i, /TOKEN/i, /SECRET/i, /PASSWORD/i];

/**
 * The environment for commands the model chooses: the server's own minus anything that looks like a
 * credential. Commands can be steered by untrusted content the model reads (prompt injection), and
 * their output lands in transcripts and events, so provider keys and the server's API tokens
 * (`A3S_API_TOKENS`) must not be one `env` or `curl` away.
 */
export function sanitizedEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || SECRET_NAME.some((pattern) => pattern.test(name))) continue;
    result[name] = value;
  }
  // No terminal and no stdin: keep pagers and credential prompts from waiting forever.
  return { ...result, PAGER: 'cat', GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' };
}
