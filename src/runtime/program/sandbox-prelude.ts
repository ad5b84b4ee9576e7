/**
 * JavaScript evaluated in the QuickJS VM before the script. It evaluates to a factory that receives the
 * two host functions, installs `console`, builds the frozen `ctx` object and returns `start`, which runs
 * the script's `run(ctx, inputs)` and resolves with an envelope string: `R<json>` (result), `E<text>`
 * (error) or `L<chars>` (result too large). The host functions never appear on `globalThis`; every check
 * that matters (allowed tools, call limit, recursion) is made by the host, not here.
 */
export const SANDBOX_PRELUDE = String.raw`(function (hostCall, hostLog, maxLogChars) {
  'use strict';
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const freeze = Object.freeze;
  const defineProperty = Object.defineProperty;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const ProxyCtor = Proxy;
  const assign = Object.assign;

  const describe = (error) => {
    try {
      if (error instanceof ErrorCtor) {
        const head = String(error.name) + ': ' + String(error.message);
        const stack = typeof error.stack === 'string' ? error.stack : '';
        return stack ? head + '\n' + stack : head;
      }
      if (typeof error === 'string') return 'Uncaught ' + error;
      const text = stringify(error);
      return 'Uncaught ' + (text === undefined ? String(error) : text);
    } catch (_) {
      return 'Uncaught exception (it could not be described)';
    }
  };

  const format = (value) => {
    if (typeof value === 'string') return value;
    if (value instanceof ErrorCtor) return describe(value);
    try {
      const text = stringify(value);
      if (text !== undefined) return text;
    } catch (_) {}
    try {
      return String(value);
    } catch (_) {
      return '[unprintable]';
    }
  };

  const log = function () {
    let text = '';
    for (let i = 0; i < arguments.length; i++) {
      text += (i > 0 ? ' ' : '') + format(arguments[i]);
      if (text.length > maxLogChars) break;
    }
    hostLog(text.length > maxLogChars ? text.slice(0, maxLogChars) : text);
  };
  defineProperty(globalThis, 'console', {
    value: freeze({ log: log, info: log, warn: log, error: log, debug: log }),
    writable: true,
    configurable: true,
    enumerable: false,
  });

  const encodeArgs = (name, args) => {
    const text = stringify(args === undefined || args === null ? {} : args);
    if (text === undefined) throw new TypeErrorCtor('arguments of tool "' + name + '" must be a JSON object');
    return text;
  };
  const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);
  // The seed's helper forms: helper(value, options) -> {...options, [key]: value}; an object alone is the arguments.
  const argsOf = (key, value, options) => {
    if (isObject(value) && options === undefined) return value;
    const args = assign({}, isObject(options) ? options : {});
    args[key] = value;
    return args;
  };
  const callTool = async (name, args) => parse(await hostCall('tool', name, encodeArgs(name, args)));
  const outputOf = async (name, args) => (await callTool(name, args)).output;
  const tools = freeze(
    new ProxyCtor(
      {},
      {
        get: (_target, prop) => (typeof prop !== 'string' || prop === 'then' ? undefined : (args) => callTool(prop, args)),
        has: (_target, prop) => typeof prop === 'string',
      },
    ),
  );
  const ctx = freeze({
    tool: async (name, args) => {
      if (typeof name !== 'string' || name === '') throw new TypeErrorCtor('ctx.tool(name, args): name must be a non-empty string');
      return await callTool(name, args);
    },
    tools: tools,
    readFile: async (path, options) => {
      if (typeof path !== 'string' || path === '') throw new TypeErrorCtor('ctx.readFile(path): path must be a non-empty string');
      return await hostCall('readFile', 'read', stringify({ path: path, options: isObject(options) ? options : null }));
    },
    read: (path, options) => callTool('read', argsOf('file_path', path, options)),
    grep: (query, options) => outputOf('grep', argsOf('pattern', query, options)),
    glob: (query, options) => outputOf('glob', argsOf('pattern', query, options)),
    ls: (path, options) => outputOf('ls', argsOf('path', path === undefined ? '.' : path, options)),
    bash: (command, options) => outputOf('bash', argsOf('command', command, options)),
    git: (args) => callTool('git', typeof args === 'string' ? { command: args } : args),
    verify: (args) => callTool('bash', typeof args === 'string' ? { command: args } : args),
  });

  return async function start(inputsJson, maxResultChars) {
    let value;
    try {
      if (typeof run !== 'function') {
        return 'E' + 'the program must define a function run(ctx, inputs), e.g. async function run(ctx, inputs) { return 1; }';
      }
      value = await run(ctx, parse(inputsJson));
    } catch (error) {
      return 'E' + describe(error);
    }
    let json;
    try {
      json = stringify(value === undefined ? null : value);
    } catch (error) {
      return 'E' + 'run() returned a value that cannot be converted to JSON: ' + describe(error);
    }
    if (json === undefined) json = 'null';
    if (json.length > maxResultChars) return 'L' + json.length;
    return 'R' + json;
  };
})`;
