import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { McpManager } from '../../src/runtime/mcp/mcp-manager.js';
import type { AnyToolDefinition } from '../../src/runtime/tools/define-tool.js';
import { ECHO_SERVER, echoServerConfig, groupGone, mcpToolContext, processGone, waitFor } from './mcp-test-helpers.js';

const managers: McpManager[] = [];
function manager(now: () => number = Date.now, logs?: string[]): McpManager {
  const created = new McpManager({ source: 'session', now, onLog: (server, line) => logs?.push(`${server}: ${line}`) });
  managers.push(created);
  return created;
}
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.close()));
});

function tool(m: McpManager, name: string): AnyToolDefinition {
  const found = m.tools().find((t) => t.name === name);
  if (!found)
    throw new Error(
      `no tool ${name}; have ${m
        .tools()
        .map((t) => t.name)
        .join(', ')}`,
    );
  return found;
}

function call(m: McpManager, name: string, args: Record<string, unknown> = {}, signal?: AbortSignal) {
  const t = tool(m, name);
  return t.execute(t.parameters.parse(args), mcpToolContext(signal));
}

describe('stdio MCP server', () => {
  it('adds, lists tools with their schemas as given, calls them, and removes the whole process group', async () => {
    const logs: string[] = [];
    const m = manager(Date.now, logs);
    const changes: string[] = [];
    m.onChange((change) => changes.push(`${change.reason}:${change.server}:${change.toolNames.length}`));

    await expect(m.add(echoServerConfig('echo', 'the-secret'))).resolves.toEqual({ toolCount: 6 });
    expect(
      m
        .tools()
        .map((t) => t.name)
        .sort(),
    ).toEqual(
      [
        'mcp__echo__crash',
        'mcp__echo__echo',
        'mcp__echo__get_secret',
        'mcp__echo__picture',
        'mcp__echo__slow',
        'mcp__echo__spawn_child',
      ].sort(),
    );
    const echo = tool(m, 'mcp__echo__echo');
    expect(echo.description).toBe('Echo a message back.');
    expect(echo.readOnly).toBe(true);
    expect(tool(m, 'mcp__echo__get_secret').readOnly).toBe(false);
    expect(echo.jsonSchema).toMatchObject({
      type: 'object',
      properties: { message: { type: 'string', description: 'The text to echo.' } },
      required: ['message'],
    });
    expect(changes).toEqual(['added:echo:6']);

    await expect(call(m, 'mcp__echo__echo', { message: 'hello' })).resolves.toMatchObject({
      output: 'hello',
      exitCode: 0,
    });
    await expect(call(m, 'mcp__echo__get_secret')).resolves.toMatchObject({ output: 'the-secret', exitCode: 0 });
    const picture = await call(m, 'mcp__echo__picture');
    expect(picture).toMatchObject({ exitCode: 1, metadata: { is_error: true, mcp_server: 'echo' } });
    expect(picture.output).toBe('a picture follows\n[image: image/png, 8 bytes]');

    const [status] = m.status();
    expect(status).toMatchObject({
      name: 'echo',
      transport: 'stdio',
      connected: true,
      toolCount: 6,
      error: null,
      source: 'session',
    });
    expect(logs.some((line) => line.includes('echo server ready'))).toBe(true);

    const pgid = m.connection('echo')?.pid;
    expect(pgid).toBeTypeOf('number');
    const child = await call(m, 'mcp__echo__spawn_child');
    const grandchild = Number(child.output);
    expect(grandchild).toBeGreaterThan(0);
    expect(await processGone(grandchild)).toBe(false);

    await expect(m.remove('echo')).resolves.toBe(true);
    // remove() resolves once no process of the group runs (zombies wait for init to reap them).
    expect(await groupGone(pgid as number)).toBe(true);
    expect(await processGone(grandchild)).toBe(true);
    expect(m.tools()).toEqual([]);
    expect(m.status()).toEqual([]);
    expect(changes).toEqual(['added:echo:6', 'removed:echo:0']);
    await expect(m.remove('echo')).resolves.toBe(false);
  });

  it('rejects a duplicate name and a command that does not exist, leaving nothing behind', async () => {
    const m = manager();
    await m.add(echoServerConfig('echo'));
    await expect(m.add(echoServerConfig('echo'))).rejects.toThrow(/MCP server named "echo" already exists/);
    await expect(
      m.add({ name: 'ghost', transport: { type: 'stdio', command: 'a3s-no-such-command-xyz' } }),
    ).rejects.toThrow(
      'MCP server "ghost" could not connect: command "a3s-no-such-command-xyz" was not found (spawn ENOENT).',
    );
    expect(m.status().map((s) => s.name)).toEqual(['echo']);
    await expect(
      m.add({ name: 'bad', transport: { type: 'stdio', command: process.execPath, args: ['-e', 'process.exit(5)'] } }),
    ).rejects.toThrow(/MCP server "bad" could not connect: the server process exited \(code 5\)/);
    await expect(m.add({ name: 'x__y', transport: { type: 'stdio', command: 'node' } })).rejects.toThrow(
      /mcp\.name: name must not contain "__"/,
    );
    expect(m.status().map((s) => s.name)).toEqual(['echo']);
  });

  it('fails a call fast when the server dies mid-call, and the next call reconnects', async () => {
    const m = manager();
    await m.add(echoServerConfig('echo', 'secret', 20_000));
    const pgid = m.connection('echo')?.pid as number;
    const grandchild = Number((await call(m, 'mcp__echo__spawn_child')).output);

    const started = Date.now();
    const crashed = await call(m, 'mcp__echo__crash');
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(2_000);
    expect(crashed.exitCode).toBe(1);
    expect(crashed.output).toContain(
      'MCP server "echo": tool crash failed: the server process exited (code 3) before answering.',
    );
    expect(crashed.output).toContain('crash: exiting with code 3');
    expect(crashed.metadata).toMatchObject({ reason: 'connection_lost', mcp_server: 'echo' });
    // Children left in the dead server's group are killed too.
    expect(await waitFor(() => groupGone(pgid), 2_000)).toBe(true);
    expect(await waitFor(() => processGone(grandchild), 2_000)).toBe(true);

    await waitFor(() => m.status()[0]?.error?.includes('code 3') === true);
    const [status] = m.status();
    expect(status).toMatchObject({ connected: false, toolCount: 6 });
    expect(status?.error).toMatch(/^disconnected: the server process exited \(code 3\)/);
    // The configuration and the tools stay; the next call starts a fresh process.
    await expect(call(m, 'mcp__echo__echo', { message: 'again' })).resolves.toMatchObject({
      output: 'again',
      exitCode: 0,
    });
    expect(m.status()[0]).toMatchObject({ connected: true, error: null });
    expect(m.connection('echo')?.pid).not.toBe(pgid);
  });

  it('reports a failed reconnect as a tool error naming the server, and recovers once it can start again', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'a3s-mcp-'));
    const marker = path.join(dir, 'allowed');
    writeFileSync(marker, '');
    // Starts the echo server only while the marker file exists.
    const script = `import { existsSync } from 'node:fs'; if (!existsSync(${JSON.stringify(marker)})) { console.error('not allowed to start'); process.exit(7); } process.argv[2] = 'gated'; await import(${JSON.stringify(pathToFileURL(ECHO_SERVER).href)});`;
    const m = manager();
    try {
      await m.add({
        name: 'gated',
        transport: { type: 'stdio', command: process.execPath, args: ['--input-type=module', '-e', script] },
      });
      await m.disconnectIdle(0, Date.now() + 1);
      rmSync(marker);
      const failed = await call(m, 'mcp__gated__echo', { message: 'x' });
      expect(failed).toMatchObject({ exitCode: 1, metadata: { reason: 'connect_failed', mcp_server: 'gated' } });
      expect(failed.output).toMatch(
        /^MCP server "gated": tool echo failed: could not connect: the server process exited \(code 7\) before answering\. Its stderr ends with:\nnot allowed to start/,
      );
      expect(m.status()[0]).toMatchObject({ connected: false, error: expect.stringMatching(/^could not connect: /) });
      writeFileSync(marker, '');
      await expect(call(m, 'mcp__gated__get_secret')).resolves.toMatchObject({ output: 'gated', exitCode: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('times out a slow call and cancels on the abort signal, and the server stays usable', async () => {
    const m = manager();
    await m.add(echoServerConfig('echo', 'secret', 10_000));
    const connection = m.connection('echo');
    // The per-call override stands in for the server's timeoutMs, which a loaded machine may need for startup.
    const timedOut = await connection?.callTool('slow', { ms: 5_000 }, { timeoutMs: 300 });
    expect(timedOut).toMatchObject({ exitCode: 1, metadata: { reason: 'timeout' } });
    expect(timedOut?.output).toBe(
      'MCP server "echo": tool slow failed: no answer within 300 ms (the timeout of this call).',
    );

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = Date.now();
    await expect(call(m, 'mcp__echo__slow', { ms: 5_000 }, controller.signal)).resolves.toMatchObject({
      exitCode: 1,
      metadata: { reason: 'cancelled' },
    });
    expect(Date.now() - started).toBeLessThan(2_000);
    await expect(call(m, 'mcp__echo__echo', { message: 'ok' })).resolves.toMatchObject({ output: 'ok', exitCode: 0 });
    expect(m.status()[0]).toMatchObject({ connected: true, error: null });
  });

  it('disconnects idle servers, keeps their configuration, and reconnects on the next call', async () => {
    let clock = 1_000_000;
    const m = manager(() => clock);
    const connections: string[] = [];
    m.onConnectionChange((change) => connections.push(`${change.server}:${change.connected}:${change.reason}`));
    await m.add(echoServerConfig('a'));
    clock += 1_000;
    await m.add(echoServerConfig('b'));
    expect(m.status().map((s) => s.lastActivityMs)).toEqual([1_000_000, 1_001_000]);

    clock += 10_000;
    await expect(m.disconnectIdle(60_000)).resolves.toEqual([]);
    await expect(m.disconnectIdle(10_500)).resolves.toEqual(['a']);
    const pgidB = m.connection('b')?.pid as number;
    expect(m.status().map((s) => [s.name, s.connected])).toEqual([
      ['a', false],
      ['b', true],
    ]);
    // The idle server keeps its tools and configuration.
    expect(m.tools().filter((t) => t.name.startsWith('mcp__a__'))).toHaveLength(6);
    await expect(m.disconnectIdle(0, clock + 1)).resolves.toEqual(['b']);
    expect(await waitFor(() => groupGone(pgidB), 2_000)).toBe(true);

    clock += 5_000;
    await expect(call(m, 'mcp__a__echo', { message: 'back' })).resolves.toMatchObject({ output: 'back', exitCode: 0 });
    expect(m.status()[0]).toMatchObject({ name: 'a', connected: true, lastActivityMs: clock });
    expect(connections).toEqual(['a:true:null', 'b:true:null', 'a:false:idle', 'b:false:idle', 'a:true:null']);
  });

  it('registers a configured server that cannot start yet, and refresh picks up its tools later', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'a3s-mcp-'));
    const m = manager();
    try {
      const config = {
        name: 'later',
        transport: {
          type: 'stdio' as const,
          command: process.execPath,
          args: [ECHO_SERVER, 'late'],
          cwd: path.join(dir, 'missing'),
        },
      };
      const registered = await m.register(config);
      expect(registered).toEqual({
        toolCount: 0,
        error: `MCP server "later" could not connect: cwd ${path.join(dir, 'missing')} is not a directory.`,
      });
      expect(m.status()[0]).toMatchObject({
        name: 'later',
        connected: false,
        toolCount: 0,
        error: expect.stringMatching(/^could not connect: cwd/),
      });
      await expect(m.register(config)).rejects.toThrow(/already exists/);
      mkdirSync(path.join(dir, 'missing'));
      await expect(m.refresh()).resolves.toEqual([{ server: 'later', toolCount: 6, error: null }]);
      expect(m.status()[0]).toMatchObject({ connected: true, toolCount: 6, error: null });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refreshes the tools of every server, reconnecting disconnected ones', async () => {
    const m = manager();
    await m.add(echoServerConfig('echo'));
    await m.disconnectIdle(0, Date.now() + 1);
    expect(m.status()[0]?.connected).toBe(false);
    await expect(m.refresh()).resolves.toEqual([{ server: 'echo', toolCount: 6, error: null }]);
    expect(m.status()[0]?.connected).toBe(true);
  });

  it('closes every server with its layer and refuses new ones', async () => {
    const m = manager();
    await m.add(echoServerConfig('one'));
    await m.add(echoServerConfig('two'));
    const pgids = ['one', 'two'].map((name) => m.connection(name)?.pid as number);
    await m.close();
    for (const pgid of pgids) expect(await groupGone(pgid)).toBe(true);
    await expect(m.add(echoServerConfig('three'))).rejects.toThrow(/were closed/);
  });
});
