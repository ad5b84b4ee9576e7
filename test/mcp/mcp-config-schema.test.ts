import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { McpServerConfigSchema, McpServerStatusSchema } from '../../src/protocol/mcp.js';

function firstIssue(input: unknown): { path: string; message: string } {
  const result = McpServerConfigSchema.safeParse(input);
  if (result.success) throw new Error('expected a failure');
  const issue = result.error.issues[0];
  return { path: issue?.path.join('.') ?? '', message: issue?.message ?? '' };
}

describe('McpServerConfigSchema', () => {
  it('accepts stdio, http, streamable-http and sse servers and fills in the timeout', () => {
    expect(
      McpServerConfigSchema.parse({
        name: 'echo',
        transport: { type: 'stdio', command: 'node', args: ['s.mjs'] },
        env: { A: 'b' },
      }),
    ).toEqual({
      name: 'echo',
      transport: { type: 'stdio', command: 'node', args: ['s.mjs'] },
      env: { A: 'b' },
      timeoutMs: 30_000,
    });
    for (const type of ['http', 'streamable-http', 'sse'] as const) {
      expect(
        McpServerConfigSchema.parse({
          name: 'r-1_x',
          transport: { type, url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer t' } },
          timeoutMs: 5_000,
        }),
      ).toMatchObject({ transport: { type }, timeoutMs: 5_000 });
    }
  });

  it('rejects bad configurations naming the field', () => {
    expect(firstIssue({ name: 'echo', transport: { type: 'ftp', url: 'ftp://x' } })).toMatchObject({
      path: 'transport.type',
    });
    expect(firstIssue({ name: 'my__server', transport: { type: 'stdio', command: 'node' } })).toEqual({
      path: 'name',
      message: 'name must not contain "__" (it separates the parts of mcp__<server>__<tool>)',
    });
    expect(firstIssue({ name: 'has space', transport: { type: 'stdio', command: 'node' } })).toMatchObject({
      path: 'name',
    });
    expect(firstIssue({ name: 'x'.repeat(65), transport: { type: 'stdio', command: 'node' } })).toMatchObject({
      path: 'name',
    });
    expect(firstIssue({ name: 'echo', transport: { type: 'stdio' } })).toMatchObject({ path: 'transport.command' });
    expect(firstIssue({ name: 'echo', transport: { type: 'stdio', command: '' } })).toMatchObject({
      path: 'transport.command',
    });
    expect(firstIssue({ name: 'echo', transport: { type: 'http', url: 'file:///etc/passwd' } })).toEqual({
      path: 'transport.url',
      message: 'url must be an http:// or https:// URL',
    });
    expect(firstIssue({ name: 'echo', transport: { type: 'http', url: 'http://x', command: 'node' } })).toMatchObject({
      path: 'transport',
    });
    expect(firstIssue({ name: 'echo', transport: { type: 'http', url: 'http://x' }, env: { A: 'b' } })).toEqual({
      path: 'env',
      message: 'env applies to stdio servers only',
    });
    expect(
      firstIssue({ name: 'echo', transport: { type: 'stdio', command: 'node' }, timeoutMs: 600_001 }),
    ).toMatchObject({ path: 'timeoutMs' });
    expect(firstIssue({ name: 'echo', transport: { type: 'stdio', command: 'node' }, extra: 1 })).toMatchObject({
      path: '',
    });
  });

  it('converts to JSON schema for the OpenAPI document', () => {
    expect(() => z.toJSONSchema(McpServerConfigSchema, { io: 'input' })).not.toThrow();
    expect(() => z.toJSONSchema(McpServerStatusSchema)).not.toThrow();
  });
});
