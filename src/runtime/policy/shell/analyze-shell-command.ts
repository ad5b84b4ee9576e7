import { isAbsolute, resolve, sep } from 'node:path';
import { withBashTree, type BashNode } from './bash-syntax.js';
import type { ShellAnalysis, SimpleCommand } from './shell-analysis.js';

/** Statements that are not a `command` node but still run (or change state): each is one simple command. */
const STATEMENTS = new Set([
  'declaration_command',
  'unset_command',
  'test_command',
  'variable_assignment',
  'variable_assignments',
]);

/** Every other node type of tree-sitter-bash; anything outside this set (and STATEMENTS) makes the line unparseable. */
const KNOWN = new Set([
  'program',
  'list',
  'pipeline',
  'subshell',
  'compound_statement',
  'redirected_statement',
  'if_statement',
  'elif_clause',
  'else_clause',
  'while_statement',
  'for_statement',
  'c_style_for_statement',
  'case_statement',
  'case_item',
  'do_group',
  'function_definition',
  'negated_command',
  'heredoc_redirect',
  'heredoc_body',
  'herestring_redirect',
  'file_redirect',
  'command',
  'command_name',
  'command_substitution',
  'process_substitution',
  'word',
  'string',
  'raw_string',
  'ansi_c_string',
  'translated_string',
  'number',
  'concatenation',
  'simple_expansion',
  'expansion',
  'arithmetic_expansion',
  'brace_expression',
  'array',
  'subscript',
  'variable_name',
  'special_variable_name',
  'string_content',
  'heredoc_content',
  'heredoc_start',
  'heredoc_end',
  'comment',
  'extglob_pattern',
  'regex',
  'test_operator',
  'file_descriptor',
  'binary_expression',
  'unary_expression',
  'ternary_expression',
  'postfix_expression',
  'parenthesized_expression',
  'ERROR',
]);

/** Builtins that run a string or a file as shell code, or replace the shell. */
const CODE_RUNNERS = new Set(['eval', 'source', '.', 'exec']);
/** Programs that are shells: with `-c` they run a string, with no script operand they run their standard input. */
const SHELLS = new Set([
  'sh',
  'bash',
  'rbash',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'pdksh',
  'ash',
  'yash',
  'fish',
  'csh',
  'tcsh',
]);
/** Programs that run their arguments as another command: a shell or `eval` after them is looked at too. */
const WRAPPERS = new Set([
  'env',
  'command',
  'builtin',
  'nohup',
  'nice',
  'time',
  'timeout',
  'xargs',
  'sudo',
  'doas',
  'setsid',
  'stdbuf',
  'ionice',
  'chrt',
  'taskset',
  'flock',
  'strace',
  'ltrace',
  'busybox',
  'chroot',
  'unshare',
  'nsenter',
  'fakeroot',
  'find',
  'parallel',
  'su',
  'runuser',
  'script',
  'coproc',
]);
/** Programs that pass their arguments to `sh -c` themselves. */
const STRING_RUNNERS = new Set(['watch']);
/** Redirect targets that are not files. */
const DEVICES = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/stdin', '/dev/tty', '/dev/zero']);
const DIRECTORY_CHANGERS = new Set(['cd', 'pushd', 'popd']);

/** A word after quote removal; `dynamic` when expansions decide its value, `glob` when it has unquoted glob/brace characters. */
interface Literal {
  text: string;
  dynamic: boolean;
  glob: boolean;
}

const ANSI_C: Readonly<Record<string, string>> = {
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

function decodeAnsiC(body: string): string {
  return body.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (whole, esc: string) => {
      const kind = esc[0];
      if (kind === 'x' || kind === 'u' || kind === 'U')
        return String.fromCodePoint(Math.min(parseInt(esc.slice(1), 16), 0x10ffff));
      if (/[0-7]/.test(kind)) return String.fromCharCode(parseInt(esc, 8) & 0xff);
      if (kind === 'c') return String.fromCharCode(esc.charCodeAt(1) & 0x1f);
      return ANSI_C[esc] ?? whole;
    },
  );
}

/** Quote removal for one word-like node (expansions are kept as their source text and mark the word dynamic). */
function literal(node: BashNode): Literal {
  switch (node.type) {
    case 'word': {
      const raw = node.text;
      return {
        text: raw.replace(/\\(\r?\n|[\s\S])/g, (_m, c: string) => (c.includes('\n') ? '' : c)),
        dynamic: false,
        glob: /(^|[^\\])[*?[{]/.test(raw),
      };
    }
    case 'number':
    case 'variable_name':
      return { text: node.text, dynamic: false, glob: false };
    case 'raw_string':
      return { text: node.text.slice(1, -1), dynamic: false, glob: false };
    case 'string':
    case 'translated_string': {
      const quoted = node.type === 'string' ? node.text : node.text.slice(1);
      const dynamic = node.namedChildren.some((child) => child !== null && child.type !== 'string_content');
      return {
        text: quoted.slice(1, -1).replace(/\\([\\"$`]|\r?\n)/g, (_m, c: string) => (c.includes('\n') ? '' : c)),
        dynamic,
        glob: false,
      };
    }
    case 'ansi_c_string':
      return { text: decodeAnsiC(node.text.slice(2, -1)), dynamic: false, glob: false };
    case 'concatenation':
    case 'command_name': {
      const parts = node.namedChildren.filter((child): child is BashNode => child !== null).map(literal);
      if (parts.length === 0) return { text: node.text, dynamic: false, glob: false };
      return {
        text: parts.map((p) => p.text).join(''),
        dynamic: parts.some((p) => p.dynamic),
        glob: parts.some((p) => p.glob),
      };
    }
    default:
      return { text: node.text, dynamic: true, glob: false };
  }
}

function baseName(word: string): string {
  return word.slice(word.lastIndexOf('/') + 1);
}

function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

/** Walks the syntax tree, collecting simple commands, redirect targets and hazards. */
class ShellWalker {
  readonly commands: SimpleCommand[] = [];
  readonly hazards = new Set<string>();
  readonly targets: string[] = [];
  parsed = true;
  changesDirectory = false;

  visit(node: BashNode, record: boolean): void {
    const type = node.type;
    if (node.isMissing || type === 'ERROR') this.parsed = false;
    if (type === 'command') return this.command(node);
    if (type === 'file_redirect') return this.redirect(node);
    if (type === 'command_substitution' || type === 'process_substitution') {
      this.hazards.add(
        type === 'command_substitution'
          ? 'command substitution ($(...) or backticks)'
          : 'process substitution (<(...) or >(...))',
      );
      return this.children(node, true);
    }
    if (STATEMENTS.has(type)) {
      if (record) this.record(node.text.replace(/\s+/g, ' ').trim(), this.statementWords(node));
      return this.children(node, false);
    }
    if (!KNOWN.has(type)) {
      this.parsed = false;
      this.hazards.add(`unsupported shell syntax (${type})`);
    }
    this.children(node, record);
  }

  private children(node: BashNode, record: boolean): void {
    for (const child of node.namedChildren) if (child !== null) this.visit(child, record);
  }

  private record(fallback: string, words: string[]): void {
    this.commands.push({ subject: words.length > 0 ? words.join(' ') : fallback, words });
  }

  private statementWords(node: BashNode): string[] {
    if (node.type === 'test_command') return [];
    if (node.type === 'variable_assignment') return [this.assignment(node)];
    return node.children
      .filter((child): child is BashNode => child !== null && child.type !== 'comment')
      .map((child) =>
        child.type === 'variable_assignment'
          ? this.assignment(child)
          : child.isNamed
            ? literal(child).text
            : child.text,
      );
  }

  private assignment(node: BashNode): string {
    const name = node.childForFieldName('name')?.text ?? '';
    const value = node.childForFieldName('value');
    const operator = node.children.find((child) => child !== null && !child.isNamed)?.text ?? '=';
    return `${name}${operator}${value ? literal(value).text : ''}`;
  }

  private command(node: BashNode): void {
    const words: string[] = [];
    let assignments = 0;
    let nameLiteral: Literal | undefined;
    for (const child of node.namedChildren) {
      if (child === null || child.type === 'comment') continue;
      if (child.type === 'file_redirect' || child.type === 'herestring_redirect' || child.type === 'heredoc_redirect') {
        this.visit(child, true);
        continue;
      }
      if (child.type === 'variable_assignment') {
        words.push(this.assignment(child));
        assignments += 1;
      } else {
        const lit = literal(child);
        if (child.type === 'command_name') nameLiteral = lit;
        words.push(lit.text);
      }
      this.visit(child, false);
    }
    this.record(node.text, words);
    const argv = words.slice(assignments);
    if (argv.length === 0) return;
    if (nameLiteral && (nameLiteral.dynamic || nameLiteral.glob))
      this.hazards.add('a command name that is not a literal word');
    this.program(argv, 0);
  }

  private program(argv: readonly string[], at: number): void {
    const name = baseName(argv[at]);
    if (DIRECTORY_CHANGERS.has(name)) this.changesDirectory = true;
    if (CODE_RUNNERS.has(name) && (at === 0 || name !== '.')) this.hazards.add(`${name} (runs shell code it is given)`);
    if (STRING_RUNNERS.has(name)) this.hazards.add(`${name} (runs its arguments through sh -c)`);
    if (SHELLS.has(name)) this.shell(argv, at);
    if (at === 0 && WRAPPERS.has(name)) {
      for (let i = 1; i < argv.length; i++) {
        const inner = baseName(argv[i]);
        if (CODE_RUNNERS.has(inner) || SHELLS.has(inner) || STRING_RUNNERS.has(inner)) this.program(argv, i);
      }
      if (
        (name === 'su' || name === 'runuser' || name === 'script') &&
        argv.slice(1).some((w) => /^-[A-Za-z]*c[A-Za-z]*$/.test(w) || w === '--command')
      ) {
        this.hazards.add(`${name} -c (runs a string as shell code)`);
      }
    }
  }

  private shell(argv: readonly string[], at: number): void {
    const rest = argv.slice(at + 1);
    if (rest.some((w) => /^-[A-Za-z]*c[A-Za-z]*$/.test(w) || w === '--command')) {
      this.hazards.add(`${baseName(argv[at])} -c (a shell running a string)`);
      return;
    }
    const operand = rest.find((w) => !w.startsWith('-') && !w.startsWith('+'));
    if (operand === undefined || rest.includes('-s') || rest.includes('-')) {
      this.hazards.add(`${baseName(argv[at])} reading commands from its input (a pipe, here-doc or here-string)`);
    }
  }

  private redirect(node: BashNode): void {
    const destination = node.childForFieldName('destination');
    const operator = node.children.find((child) => child !== null && !child.isNamed)?.text ?? '';
    if (!destination) {
      this.children(node, true);
      return;
    }
    this.children(node, true);
    const target = literal(destination);
    if ((operator === '>&' || operator === '<&') && /^(\d+-?|-)$/.test(target.text)) return;
    if (target.dynamic || target.glob) {
      this.hazards.add('a redirect whose target is not a literal path');
      return;
    }
    this.targets.push(target.text);
  }

  /** Hazards of the collected redirect targets, once the whole line (and any `cd`) has been seen. */
  checkTargets(workspace: string | undefined): void {
    const root = workspace === undefined ? undefined : resolve(workspace);
    for (const target of this.targets) {
      if (DEVICES.has(target) || /^\/dev\/fd\/\d+$/.test(target)) continue;
      const outside = `a redirect outside the workspace (${target})`;
      if (target.startsWith('~')) this.hazards.add(outside);
      else if (isAbsolute(target)) {
        if (root === undefined || !inside(resolve(target), root)) this.hazards.add(outside);
      } else if (this.changesDirectory) this.hazards.add(`a relative redirect after a directory change (${target})`);
      else {
        const base = root ?? resolve('/', 'workspace');
        if (!inside(resolve(base, target), base)) this.hazards.add(outside);
      }
    }
  }
}

/**
 * Split a bash command line into the simple commands it would run (across `;`, `&&`, `||`, `|`, `&`, newlines,
 * subshells, braces, `if`/`while`/`for`/`case` bodies, functions and substitutions) and list the constructs that
 * can never be auto-allowed by a pattern. `workspace` is the directory the command runs in (for redirect targets;
 * without it every absolute target counts as outside). Synchronous.
 */
export function analyzeShellCommand(command: string, workspace?: string): ShellAnalysis {
  const result = withBashTree(command, (root) => {
    const walker = new ShellWalker();
    walker.visit(root, true);
    if (root.hasError) walker.parsed = false;
    walker.checkTargets(workspace);
    return { parsed: walker.parsed, commands: walker.commands, hazards: [...walker.hazards] };
  });
  return result ?? { parsed: false, commands: [], hazards: [] };
}
