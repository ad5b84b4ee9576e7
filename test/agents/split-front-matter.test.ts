import { describe, expect, it } from 'vitest';
import { CodeError } from '../../src/errors.js';
import { parseAgentFile } from '../../src/runtime/agent-definitions/parse-agent-file.js';
import { splitFrontMatter } from '../../src/runtime/agent-definitions/split-front-matter.js';

describe('splitFrontMatter', () => {
  it('splits front matter and body (BOM, CRLF and "..." closings included)', () => {
    expect(splitFrontMatter('---\nname: a\n---\nbody\nmore')).toEqual({ frontMatter: 'name: a', body: 'body\nmore' });
    expect(splitFrontMatter('\uFEFF---\r\nname: a\r\n...\r\nbody')).toEqual({ frontMatter: 'name: a', body: 'body' });
    expect(splitFrontMatter('---\n---\n')).toEqual({ frontMatter: '', body: '' });
    // A later "---" inside the body stays in the body.
    expect(splitFrontMatter('---\na: 1\n---\nx\n---\ny')).toEqual({ frontMatter: 'a: 1', body: 'x\n---\ny' });
  });
  it('has no front matter unless the first line is "---", and throws when it is never closed', () => {
    expect(splitFrontMatter('# title\n---\n')).toEqual({ frontMatter: undefined, body: '# title\n---\n' });
    expect(splitFrontMatter(' ---\na: 1\n---\n').frontMatter).toBeUndefined();
    expect(() => splitFrontMatter('---\na: 1\n')).toThrow('never closed');
  });
});

describe('parseAgentFile', () => {
  const ctx = (file: string) => ({ file, source: 'session' as const, errorCode: 'VALIDATION_ERROR' as const });
  it('reads Markdown (body = prompt) and YAML definitions into agents', () => {
    const md = parseAgentFile(
      '---\nname: docs\ndescription: D\nmax_steps: 3\npermissions:\n  deny: [bash]\n---\n\nBe brief.\n',
      ctx('a/docs.md'),
    );
    expect(md).toMatchObject({
      name: 'docs',
      description: 'D',
      prompt: 'Be brief.',
      maxSteps: 3,
      mode: 'general',
      readOnly: false,
    });
    // Deny-only permissions restrict; everything else keeps the session's verdict.
    expect(md.permissions).toEqual({ allow: [], deny: ['bash'], ask: [], defaultDecision: 'allow', enabled: true });
    const yaml = parseAgentFile(
      'name: ro\ndescription: D\nprompt: P\npermissions:\n  allow: [read, grep]\n',
      ctx('ro.yml'),
    );
    // An allow list is an allow-list: anything it does not allow is denied.
    expect(yaml.permissions?.defaultDecision).toBe('deny');
    expect(yaml.readOnly).toBe(true);
    expect(parseAgentFile('name: free\ndescription: D\nprompt: P\n', ctx('f.yaml')).permissions).toBeUndefined();
  });
  it('names the file and the field of every problem', () => {
    const problem = (text: string, file = 'x.yaml') => {
      try {
        parseAgentFile(text, ctx(file));
      } catch (error) {
        expect(error).toBeInstanceOf(CodeError);
        return (error as CodeError).message;
      }
      throw new Error('no error');
    };
    expect(problem('name: a\ndescription: d\nprompt: p\nmax_steps: 0\n')).toMatch(/^x\.yaml: max_steps: /);
    expect(problem('name: a\ndescription: d\nprompt: p\npermissions:\n  allow: ["ok", 3]\n')).toMatch(
      /^x\.yaml: permissions\.allow\.1: /,
    );
    expect(problem('name: a\ndescription: d\nprompt: p\nmodel: nomodel\n')).toBe(
      'x.yaml: model: must be "provider/model"',
    );
    expect(problem('- a\n- b\n')).toContain('x.yaml: the definition must be a YAML mapping');
    expect(problem('name: plan\ndescription: d\nprompt: p\n')).toContain('x.yaml: name: "plan" is a built-in agent');
    expect(problem('# no front matter\n', 'y.md')).toContain(
      'y.md: a Markdown agent definition starts with YAML front matter',
    );
  });
  it('takes a file without prompt or body, its description as the prompt', () => {
    const text = 'name: docs-dynamic\ndescription: Answers from docs\nmax_steps: 4\npermissions:\n  allow: [read]\n';
    expect(parseAgentFile(text, ctx('agents/docs-dynamic.yaml'))).toMatchObject({
      name: 'docs-dynamic',
      description: 'Answers from docs',
      prompt: 'Answers from docs',
      maxSteps: 4,
      readOnly: true,
    });
    // A blank prompt, or a Markdown file with an empty body, is the same.
    expect(parseAgentFile('name: a\ndescription: d\nprompt: "   "\n', ctx('x.yaml')).prompt).toBe('d');
    expect(parseAgentFile('---\nname: b\ndescription: e\n---\n\n', ctx('b.md')).prompt).toBe('e');
  });
});
