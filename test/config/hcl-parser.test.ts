import { describe, it, expect } from 'vitest';
import { HclParseError } from '../../src/config/hcl-parse-error.js';
import { formatPath, parseHcl, parseJsonWithLines, type HclValue } from '../../src/config/hcl-parser.js';

function parse(source: string, env: Record<string, string> = {}): Record<string, HclValue> {
  return parseHcl(source, { env }).value;
}

function parseError(source: string, env: Record<string, string> = {}): HclParseError {
  try {
    parseHcl(source, { env });
  } catch (err) {
    expect(err).toBeInstanceOf(HclParseError);
    return err as HclParseError;
  }
  throw new Error(`expected a parse error for ${JSON.stringify(source)}`);
}

describe('parseHcl values', () => {
  const cases: [string, string, Record<string, HclValue>][] = [
    ['plain string', 'a = "hello"', { a: 'hello' }],
    ['empty string', 'a = ""', { a: '' }],
    [
      'escapes',
      String.raw`a = "q\" b\\ n\n t\t r\r u\u00e9 U\U0001F600"`,
      { a: 'q" b\\ n\n t\t r\r u\u00e9 U\u{1F600}' },
    ],
    ['literal template escape', 'a = "$${HOME}"', { a: '${HOME}' }],
    ['lone dollar', 'a = "cost $5"', { a: 'cost $5' }],
    ['integer', 'a = 42', { a: 42 }],
    ['zero', 'a = 0', { a: 0 }],
    ['negative integer', 'a = -7', { a: -7 }],
    ['float', 'a = 3.25', { a: 3.25 }],
    ['negative float with exponent', 'a = -1.5e3', { a: -1500 }],
    ['true', 'a = true', { a: true }],
    ['false', 'a = false', { a: false }],
    ['null', 'a = null', { a: null }],
    ['empty list', 'a = []', { a: [] }],
    ['list', 'a = [1, "two", true, null]', { a: [1, 'two', true, null] }],
    ['list with trailing comma', 'a = ["x", "y",]', { a: ['x', 'y'] }],
    ['multi-line list', 'a = [\n  "x",\n  "y",\n]', { a: ['x', 'y'] }],
    ['nested lists', 'a = [[1, 2], []]', { a: [[1, 2], []] }],
    ['empty object', 'a = {}', { a: {} }],
    ['object with commas', 'a = { x = 1, y = "two" }', { a: { x: 1, y: 'two' } }],
    ['object with newlines', 'a = {\n  x = 1\n  y = 2\n}', { a: { x: 1, y: 2 } }],
    ['object with quoted keys and colons', 'a = { "gpt-4o" = 1, b: 2 }', { a: { 'gpt-4o': 1, b: 2 } }],
    ['object with trailing comma', 'a = { x = 1, }', { a: { x: 1 } }],
    ['list of objects', 'a = [{ x = 1 }, { x = 2 }]', { a: [{ x: 1 }, { x: 2 }] }],
    ['several attributes on one line', 'a = 1 b = "x" c = [1]', { a: 1, b: 'x', c: [1] }],
    ['identifiers with dashes and underscores', 'max_tool-rounds = 1', { 'max_tool-rounds': 1 }],
    ['env()', 'a = env("FOO")', { a: 'foo-value' }],
    ['env() with unused default', 'a = env("FOO", "fallback")', { a: 'foo-value' }],
    ['env() default', 'a = env("MISSING", "fallback")', { a: 'fallback' }],
    [
      'env() inside list and object',
      'a = [env("FOO")] b = { k = env("FOO") }',
      { a: ['foo-value'], b: { k: 'foo-value' } },
    ],
    ['env() empty value counts as set', 'a = env("EMPTY", "d")', { a: '' }],
    ['heredoc', 'a = <<EOF\nline 1\n  line 2\nEOF\nb = 1', { a: 'line 1\n  line 2\n', b: 1 }],
    ['indented heredoc', 'a = <<-EOT\n    one\n      two\n\n    three\n    EOT\n', { a: 'one\n  two\n\nthree\n' }],
    ['empty heredoc', 'a = <<EOF\nEOF', { a: '' }],
    ['heredoc inside block', 'b {\n  a = <<EOF\nx\nEOF\n}', { b: { a: 'x\n' } }],
    ['heredoc literal template', 'a = <<EOF\n$${x}\nEOF', { a: '${x}\n' }],
  ];
  it.each(cases)('%s', (_name, source, expected) => {
    expect(parse(source, { FOO: 'foo-value', EMPTY: '' })).toEqual(expected);
  });
});

describe('parseHcl comments and layout', () => {
  const cases: [string, string, Record<string, HclValue>][] = [
    ['hash comment', '# top\na = 1 # trailing', { a: 1 }],
    ['slash comment', '// top\na = 1 // trailing', { a: 1 }],
    ['block comment', '/* multi\nline */ a = /* inline */ 1', { a: 1 }],
    ['comment markers inside strings are text', 'a = "x # y // z /* w */"', { a: 'x # y // z /* w */' }],
    ['comments inside lists and blocks', 'a = [\n 1, # one\n 2 // two\n]\nb {\n # nothing\n}', { a: [1, 2], b: {} }],
    ['CRLF line endings', 'a = 1\r\nb = "x"\r\n', { a: 1, b: 'x' }],
    ['empty document', '', {}],
    ['only comments', '# nothing\n// here\n/* at all */', {}],
  ];
  it.each(cases)('%s', (_name, source, expected) => {
    expect(parse(source)).toEqual(expected);
  });
});

describe('parseHcl blocks', () => {
  const cases: [string, string, Record<string, HclValue>][] = [
    ['unlabeled block', 'queue {\n  max_concurrency = 4\n}', { queue: { max_concurrency: 4 } }],
    ['empty block', 'limits {}', { limits: {} }],
    ['one label', 'providers "openai" { api_key = "k" }', { providers: { openai: { api_key: 'k' } } }],
    ['two labels', 'x "a" "b" { v = 1 }', { x: { a: { b: { v: 1 } } } }],
    [
      'two labels sharing the first',
      'x "a" "b" { v = 1 }\nx "a" "c" { v = 2 }',
      { x: { a: { b: { v: 1 }, c: { v: 2 } } } },
    ],
    [
      'several labeled blocks merge',
      'mcp "github" { command = "gh" }\nmcp "fs" { command = "fs" }',
      { mcp: { github: { command: 'gh' }, fs: { command: 'fs' } } },
    ],
    [
      'repeated unlabeled blocks become a list',
      'api_token { token = "a" }\napi_token { token = "b" }\napi_token { token = "c" }',
      { api_token: [{ token: 'a' }, { token: 'b' }, { token: 'c' }] },
    ],
    ['identifier label', 'providers openai { x = 1 }', { providers: { openai: { x: 1 } } }],
    [
      'nested labeled blocks on one line',
      'providers "openai" { api_key = env("OPENAI_API_KEY") base_url = "https://api.example/v1" models "gpt-4o" { context_window = 128000 } }',
      {
        providers: {
          openai: {
            api_key: 'sk-test',
            base_url: 'https://api.example/v1',
            models: { 'gpt-4o': { context_window: 128000 } },
          },
        },
      },
    ],
    ['label with dots', 'models "gpt-4.1" { a = 1 }', { models: { 'gpt-4.1': { a: 1 } } }],
    ['deep nesting', 'a { b { c { d = true } } }', { a: { b: { c: { d: true } } } }],
  ];
  it.each(cases)('%s', (_name, source, expected) => {
    expect(parse(source, { OPENAI_API_KEY: 'sk-test' })).toEqual(expected);
  });

  it('parses the seed example', () => {
    const seed = [
      'default_model = "openai/gpt-4o"',
      'storage_backend = "file"',
      'sessions_dir = "./.a3s/sessions"',
      'max_tool_rounds = 40',
      'skill_dirs = ["./skills"]',
      'agent_dirs = ["./agents"]',
      '',
      'providers "openai" {',
      '  api_key  = env("OPENAI_API_KEY")',
      '  base_url = "https://api.openai.com/v1"',
      '  models "gpt-4o" {',
      '    context_window = 128000',
      '    max_tokens = 4096',
      '  }',
      '}',
      '',
      'queue {',
      '  max_concurrency = 4',
      '}',
    ].join('\n');
    const { value, lines } = parseHcl(seed, { env: { OPENAI_API_KEY: 'sk-seed' } });
    expect(value).toEqual({
      default_model: 'openai/gpt-4o',
      storage_backend: 'file',
      sessions_dir: './.a3s/sessions',
      max_tool_rounds: 40,
      skill_dirs: ['./skills'],
      agent_dirs: ['./agents'],
      providers: {
        openai: {
          api_key: 'sk-seed',
          base_url: 'https://api.openai.com/v1',
          models: { 'gpt-4o': { context_window: 128000, max_tokens: 4096 } },
        },
      },
      queue: { max_concurrency: 4 },
    });
    expect(lines.get('default_model')).toBe(1);
    expect(lines.get('skill_dirs[0]')).toBe(5);
    expect(lines.get('providers.openai')).toBe(8);
    expect(lines.get('providers.openai.api_key')).toBe(9);
    expect(lines.get('providers.openai.models.gpt-4o.max_tokens')).toBe(13);
    expect(lines.get('queue.max_concurrency')).toBe(18);
  });

  it('records lines for repeated blocks by index', () => {
    const { lines } = parseHcl('api_token {\n  token = "a"\n}\napi_token {\n  token = "b"\n}');
    expect(lines.get('api_token')).toBe(1);
    expect(lines.get('api_token[0]')).toBe(1);
    expect(lines.get('api_token[0].token')).toBe(2);
    expect(lines.get('api_token[1]')).toBe(4);
    expect(lines.get('api_token[1].token')).toBe(5);
    expect(lines.has('api_token.token')).toBe(false);
  });

  it('records lines for object keys and list items', () => {
    const { lines } = parseHcl('a = {\n  "gpt-4.1" = [\n    1,\n    2\n  ]\n}');
    expect(lines.get('a')).toBe(1);
    expect(lines.get('a["gpt-4.1"]')).toBe(2);
    expect(lines.get('a["gpt-4.1"][1]')).toBe(4);
  });

  it('keeps __proto__ as plain data', () => {
    const value = parse('a = { "__proto__" = { polluted = true } }');
    expect(Object.keys(value.a as object)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(value.a)).toBe(Object.prototype);
  });
});

describe('parseHcl errors', () => {
  const cases: [string, string, number, number, RegExp][] = [
    ['unterminated string', 'a = 1\nb = "abc', 2, 5, /unterminated string/],
    ['newline inside string', 'a = "abc\n"', 1, 5, /unterminated string/],
    ['bad escape', 'a = "x\\q"', 1, 7, /invalid escape sequence \\q/],
    ['short unicode escape', 'a = "\\u12"', 1, 6, /expected 4 hex digits/],
    ['template interpolation', 'a = "${var.x}"', 1, 6, /templates/],
    ['missing env var', 'a = 1\n\nkey = env("NOPE_NOT_SET")', 3, 7, /NOPE_NOT_SET is not set/],
    ['env with non-string', 'a = env(1)', 1, 5, /env\(\) takes/],
    ['env with too many arguments', 'a = env("A", "b", "c")', 1, 5, /env\(\) takes/],
    ['unknown function', 'a = file("x")', 1, 5, /unknown function file\(\)/],
    ['bare identifier value', 'a = openai', 1, 5, /unexpected identifier "openai" \(strings must be quoted\)/],
    ['missing value', 'a =\n', 2, 1, /expected a value but found end of file/],
    ['missing equals', 'a 1', 1, 3, /expected '=' or '\{' after "a"/],
    ['unclosed block', 'b {\n  a = 1\n', 3, 1, /missing '\}' for the block opened at line 1/],
    ['unclosed list', 'a = [1, 2', 1, 10, /expected ',' or '\]'/],
    ['list without commas', 'a = [1 2]', 1, 8, /expected ',' or '\]'/],
    ['unclosed object', 'a = { x = 1', 1, 12, /missing '\}' for the object opened at line 1/],
    ['stray closing brace', 'a = 1\n}', 2, 1, /expected an attribute or block name/],
    ['unexpected character', 'a = 1\nb = @', 2, 5, /unexpected character "@"/],
    ['bad number', 'a = 12abc', 1, 5, /invalid number/],
    ['unterminated block comment', 'a = 1 /* never', 1, 7, /unterminated \/\* comment/],
    ['unterminated heredoc', 'a = <<EOF\nbody\n', 1, 5, /unterminated heredoc: missing closing EOF/],
    ['heredoc template', 'a = <<EOF\n${x}\nEOF', 1, 5, /templates/],
    ['string as block name', '"a" = 1', 1, 1, /expected an attribute or block name/],
  ];
  it.each(cases)('%s', (_name, source, line, column, message) => {
    const err = parseError(source);
    expect(err.message).toMatch(message);
    expect({ line: err.line, column: err.column }).toEqual({ line, column });
    expect(err.message).toContain(`line ${line}, column ${column}`);
  });

  const duplicates: [string, string, number, RegExp][] = [
    ['duplicate attribute', 'a = 1\nb = 2\na = 3', 3, /duplicate attribute "a" at line 3: already defined at line 1/],
    [
      'duplicate attribute in a block',
      'p "x" {\n  k = 1\n  k = 2\n}',
      3,
      /duplicate attribute "k" at line 3: already defined at line 2/,
    ],
    ['duplicate object key', 'a = {\n  x = 1\n  x = 2\n}', 3, /duplicate key "x" at line 3: already defined at line 2/],
    [
      'duplicate labeled block',
      'providers "openai" {}\n\nproviders "openai" {}',
      3,
      /duplicate block providers "openai" at line 3: already defined at line 1/,
    ],
    [
      'attribute then block',
      'queue = 1\nqueue {}',
      2,
      /block "queue" at line 2 conflicts with the attribute defined at line 1/,
    ],
    [
      'block then attribute',
      'queue {}\nqueue = 1',
      2,
      /attribute "queue" at line 2 conflicts with the block defined at line 1/,
    ],
    ['labeled then unlabeled', 'p "a" {}\np {}', 2, /has no label but the one at line 1 has labels/],
    ['unlabeled then labeled', 'p {}\np "a" {}', 2, /has labels but the one at line 1 has none/],
    ['label count mismatch', 'p "a" {}\np "b" "c" {}', 2, /has 2 label\(s\) but the one at line 1 has 1/],
  ];
  it.each(duplicates)('%s', (_name, source, line, message) => {
    const err = parseError(source);
    expect(err.message).toMatch(message);
    expect(err.line).toBe(line);
  });
});

describe('parseJsonWithLines', () => {
  it('parses JSON and records lines', () => {
    const { value, lines } = parseJsonWithLines(
      '{\n  "port": 1,\n  "providers": {\n    "openai": { "apiKey": "k\\u00e9\\/" }\n  },\n  "list": [\n    1.5e2,\n    -0\n  ]\n}',
    );
    expect(value).toEqual({ port: 1, providers: { openai: { apiKey: 'k\u00e9/' } }, list: [150, -0] });
    expect(lines.get('port')).toBe(2);
    expect(lines.get('providers.openai.apiKey')).toBe(4);
    expect(lines.get('list[1]')).toBe(8);
  });

  it('accepts a top-level array or scalar', () => {
    expect(parseJsonWithLines('[1, 2]').value).toEqual([1, 2]);
    expect(parseJsonWithLines(' "x" ').value).toBe('x');
  });

  const errors: [string, string, number, number, RegExp][] = [
    ['trailing comma in object', '{\n  "a": 1,\n}', 3, 1, /trailing commas are not allowed in JSON/],
    ['trailing comma in list', '[1,]', 1, 4, /trailing commas/],
    ['missing comma', '{"a": 1\n "b": 2}', 2, 2, /expected ',' or '\}'/],
    ['comment', '{\n // no\n}', 2, 2, /comments are not allowed in JSON/],
    ['HCL equals', '{"a" = 1}', 1, 6, /expected ':'/],
    ['unquoted key', '{a: 1}', 1, 2, /expected an object key/],
    ['duplicate key', '{\n"a": 1,\n"a": 2}', 3, 1, /duplicate key "a" at line 3: already defined at line 2/],
    ['trailing garbage', '{} x', 1, 4, /after the JSON value/],
    ['raw control character', '{"a": "x\ty"}', 1, 9, /control characters/],
    ['function call', '{"a": env("X")}', 1, 7, /unexpected identifier/],
    ['leading zero', '{"a": 01}', 1, 7, /invalid number/],
  ];
  it.each(errors)('%s', (_name, source, line, column, message) => {
    let caught: unknown;
    try {
      parseJsonWithLines(source);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(HclParseError);
    const err = caught as HclParseError;
    expect(err.message).toMatch(message);
    expect({ line: err.line, column: err.column }).toEqual({ line, column });
  });
});

describe('formatPath', () => {
  const cases: [PropertyKey[], string][] = [
    [[], ''],
    [['a'], 'a'],
    [['a', 'b_c', 'gpt-4o'], 'a.b_c.gpt-4o'],
    [['apiTokens', 0, 'token'], 'apiTokens[0].token'],
    [['models', 'gpt-4.1', 'x'], 'models["gpt-4.1"].x'],
    [['a b'], '["a b"]'],
  ];
  it.each(cases)('%j -> %s', (segments, expected) => {
    expect(formatPath(segments)).toBe(expected);
  });
});
