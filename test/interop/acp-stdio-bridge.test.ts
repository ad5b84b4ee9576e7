import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { ndJsonStream } from '@agentclientprotocol/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, removeCli } from '../cli/a3s-process.js';
import { useTestServers } from '../support/run-helpers.js';
import { tempDir } from '../support/test-server.js';
import { ACP_SCENARIO_CONFIG, expectScenarioHistory, loadAcpSession, runAcpScenario } from './acp-scenario.js';

const TOKEN = 'token-acp-bridge-editor-0001';
const TOKENS = [{ token: TOKEN, principal: 'editor', tenantId: 'default', scopes: ['sessions', 'host_direct'] }];

/** `a3s acp` as an editor launches it: a child process speaking ndjson JSON-RPC on its stdio. */
function launchBridge(
  entry: string,
  url: string,
  token: string | undefined,
): { child: ChildProcessWithoutNullStreams; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(
    process.execPath,
    [entry, 'acp', '--url', url, ...(token !== undefined ? ['--token', token] : [])],
    { env: { PATH: process.env.PATH ?? '', HOME: tempDir('a3s-home-') } },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, stderr: () => stderr, exited };
}

const streamOf = (child: ChildProcessWithoutNullStreams) =>
  ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );

describe('`a3s acp`: the stdio bridge to /acp, driven by the ACP SDK client', () => {
  const start = useTestServers();
  let entry: string;
  beforeAll(() => {
    entry = buildCli();
  }, 120_000);
  afterAll(() => removeCli(entry));

  it('initialize, session/new, a prompt with an "allow always" permission, cancel, list, and load through the child process', async () => {
    const t = await start({ config: { ...ACP_SCENARIO_CONFIG, apiTokens: TOKENS } });
    const bridge = launchBridge(entry, t.url, TOKEN);
    const { sessionId } = await runAcpScenario(t, streamOf(bridge.child));
    // The editor ends the bridge's stdin: it closes the socket and exits 0.
    bridge.child.stdin.end();
    expect(await bridge.exited).toBe(0);
    t.fake.assertDone();
    const again = launchBridge(entry, t.url, TOKEN);
    expectScenarioHistory(await loadAcpSession(streamOf(again.child), sessionId, t.root));
    again.child.stdin.end();
    expect(await again.exited).toBe(0);
  }, 60_000);

  it('a bad token: the server closes with 4001 and the bridge exits 1 saying so', async () => {
    const t = await start({ config: { apiTokens: TOKENS } });
    const bridge = launchBridge(entry, t.url, 'token-that-is-not-configured-01');
    expect(await bridge.exited).toBe(1);
    expect(bridge.stderr()).toContain('4001');
  }, 30_000);
});
