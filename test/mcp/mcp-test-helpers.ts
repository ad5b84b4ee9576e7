import { workspaceFilesFor } from '../tools/tool-test-context.js';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { McpServerConfigInput } from '../../src/protocol/mcp.js';
import type { ToolContext } from '../../src/runtime/tools/define-tool.js';
import { groupHasLiveMembers } from '../../src/runtime/tools/process-group.js';

/** Absolute path of the stdio echo server fixture. */
export const ECHO_SERVER = fileURLToPath(new URL('../fixtures/mcp-echo-server.mjs', import.meta.url));

/** A stdio config starting the echo fixture with `secret` as its first argument. */
export function echoServerConfig(name: string, secret = 's3cr3t', timeoutMs?: number): McpServerConfigInput {
  return {
    name,
    transport: { type: 'stdio', command: process.execPath, args: [ECHO_SERVER, secret] },
    ...(timeoutMs ? { timeoutMs } : {}),
  };
}

/** A tool context the way the invoker builds one (no workspace access is needed by MCP tools). */
export function mcpToolContext(signal: AbortSignal = new AbortController().signal): ToolContext {
  return {
    workspace: process.cwd(),
    files: workspaceFilesFor(process.cwd()),
    signal,
    sessionId: 'session-1',
    runId: 'run-1',
    toolCallId: 'call-1',
    onOutput: () => undefined,
  };
}

/** True when the process is gone (a zombie waiting to be reaped counts as gone: it runs nothing). */
export async function processGone(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  return state === 'Z' || state === 'X' || stat === '';
}

/** True when no process of the group runs any more: `kill(-pgid, 0)` fails with ESRCH, or only zombies are left. */
export async function groupGone(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  return !(await groupHasLiveMembers(pgid));
}

/** Poll until `check` holds or `timeoutMs` passes; resolves with the last answer. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 3_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Pids of live (not zombie) processes whose command line has `marker` as one of its arguments. */
export async function livePidsWithArgument(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // the process ended while we looked
    }
    if (args.includes(marker) && !(await processGone(Number(entry)))) pids.push(Number(entry));
  }
  return pids;
}
