import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { mcpServerEnv, StdioProcessTransport } from '../../src/runtime/mcp/stdio-process-transport.js';
import { groupGone, processGone } from './mcp-test-helpers.js';

/** A transport running a node script. */
function nodeTransport(
  script: string,
  extra: Partial<ConstructorParameters<typeof StdioProcessTransport>[0]> = {},
): StdioProcessTransport {
  return new StdioProcessTransport({ command: process.execPath, args: ['-e', script], ...extra });
}

function closedPromise(transport: StdioProcessTransport): Promise<number> {
  return new Promise((resolve) => {
    transport.onclose = () => resolve(Date.now());
  });
}

describe('StdioProcessTransport', () => {
  it('frames newline-delimited JSON-RPC both ways and passes only a minimal environment', async () => {
    const transport = nodeTransport(
      `process.stdin.on('data', (d) => { for (const line of d.toString().split('\\n').filter(Boolean)) {
         const m = JSON.parse(line); process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { env: process.env } }) + '\\n'); } });`,
      { env: { MCP_EXTRA: 'yes' } },
    );
    const received: JSONRPCMessage[] = [];
    const got = new Promise<void>((resolve) => {
      transport.onmessage = (message) => {
        received.push(message);
        resolve();
      };
    });
    const previous = process.env.A3S_TEST_SECRET_TOKEN;
    process.env.A3S_TEST_SECRET_TOKEN = 'must-not-leak';
    try {
      await transport.start();
    } finally {
      if (previous === undefined) delete process.env.A3S_TEST_SECRET_TOKEN;
      else process.env.A3S_TEST_SECRET_TOKEN = previous;
    }
    await transport.send({ jsonrpc: '2.0', id: 7, method: 'ping' });
    await got;
    const env = (received[0] as unknown as { result: { env: Record<string, string> } }).result.env;
    expect(env.MCP_EXTRA).toBe('yes');
    expect(env.A3S_TEST_SECRET_TOKEN).toBeUndefined();
    expect(Object.keys(env).filter((k) => !['PATH', 'HOME', 'LANG', 'MCP_EXTRA'].includes(k))).toEqual([]);
    await transport.close();
  });

  it('fires onclose as soon as the process exits and kills what it left in its group', async () => {
    const transport = nodeTransport(
      `const c = require('node:child_process').spawn('sleep', ['300'], { stdio: 'ignore' });
       process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'child', params: { pid: c.pid } }) + '\\n');
       setTimeout(() => process.exit(4), 200);`,
    );
    const closed = closedPromise(transport);
    const child = new Promise<number>((resolve) => {
      transport.onmessage = (message) => resolve((message as unknown as { params: { pid: number } }).params.pid);
    });
    await transport.start();
    const pgid = transport.pid as number;
    const grandchild = await child;
    await closed;
    expect(transport.exit ?? (await transport.waitForExit(1_000))).toEqual({ code: 4, signal: null });
    await transport.close();
    expect(await groupGone(pgid)).toBe(true);
    expect(await processGone(grandchild)).toBe(true);
    await expect(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toThrow(/Not connected/);
  });

  it('fires onclose when the server closes stdout while it keeps running', async () => {
    const transport = nodeTransport(`require('node:fs').closeSync(1); setTimeout(() => {}, 60_000);`);
    const closed = closedPromise(transport);
    await transport.start();
    const started = Date.now();
    const at = await closed;
    expect(at - started).toBeLessThan(2_000);
    expect(await processGone(transport.pid as number)).toBe(false);
    await transport.close();
    expect(await groupGone(transport.pid as number)).toBe(true);
  });

  it('escalates to SIGKILL for a group that ignores SIGTERM and resolves when the leader exited', async () => {
    const transport = nodeTransport(
      `process.on('SIGTERM', () => {}); process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'ready' }) + '\\n'); setInterval(() => {}, 1000);`,
      { killGraceMs: 200 },
    );
    const ready = new Promise<void>((resolve) => {
      transport.onmessage = () => resolve();
    });
    await transport.start();
    await ready;
    const started = Date.now();
    await transport.close();
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(transport.exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await groupGone(transport.pid as number)).toBe(true);
  });

  it('keeps a bounded stderr tail and hands complete lines to the log', async () => {
    const lines: string[] = [];
    const transport = nodeTransport(
      `for (let i = 0; i < 2000; i++) process.stderr.write('line ' + i + ' ' + 'x'.repeat(100) + '\\n'); process.stderr.write('last');`,
      {
        stderrTailBytes: 1024,
        onStderrLine: (line) => lines.push(line),
      },
    );
    const closed = closedPromise(transport);
    await transport.start();
    await closed;
    await transport.close();
    const tail = transport.stderr();
    expect(tail.startsWith('[earlier stderr dropped]\n')).toBe(true);
    expect(tail.length).toBeLessThan(1100);
    expect(tail.endsWith('last')).toBe(true);
    expect(lines).toHaveLength(2001);
    expect(lines.at(-1)).toBe('last');
  });

  it('rejects start when the command does not exist', async () => {
    const transport = new StdioProcessTransport({ command: 'a3s-no-such-command-xyz' });
    await expect(transport.start()).rejects.toMatchObject({ code: 'ENOENT' });
    await transport.close();
  });

  it('builds the minimal environment from PATH, HOME and LANG only', () => {
    expect(
      mcpServerEnv({ A: '1' }, { PATH: '/bin', HOME: '/h', LANG: 'C', OPENAI_API_KEY: 'k', BASH_FUNC: '() { :; }' }),
    ).toEqual({
      PATH: '/bin',
      HOME: '/h',
      LANG: 'C',
      A: '1',
    });
  });
});
