import type { Readable } from 'node:stream';
import { WebSocket } from 'ws';
import type { CliIo } from './cli-io.js';
import { resolveCliConfig } from './cli-config.js';
import { EXIT } from './exit-codes.js';
import { parseFlags, positionalArgs, type FlagSpec } from './parse-flags.js';
import { UsageError } from './usage-error.js';

/** The flags of `a3s acp` (only the global ones). */
export const ACP_FLAGS = {} as const satisfies FlagSpec;

/** The longest JSON-RPC line the bridge forwards from stdin; a longer one ends the bridge (exit 1). */
export const ACP_MAX_LINE_BYTES = 16 * 1024 * 1024;

/** The server's /acp WebSocket URL for its HTTP base URL. */
export function acpWebSocketUrl(baseUrl: string): string {
  return `${baseUrl.replace(/^http/, 'ws')}/acp`;
}

/**
 * `a3s acp [--url URL] [--token T]`: a stdio bridge for editors that launch local agents (Zed agent_servers,
 * JetBrains, Neovim): newline-delimited JSON-RPC on stdin goes to the server's /acp WebSocket one message a
 * frame, and every frame comes back as one line on stdout. The token travels in the Authorization header of the
 * upgrade. Ends when stdin ends (exit 0) or the server closes the socket (exit 0 for a normal close, else 1 with
 * the close code and reason on stderr).
 */
export async function acpCommand(args: readonly string[], io: CliIo, input: Readable = process.stdin): Promise<number> {
  const { values, positionals } = parseFlags('acp', args, ACP_FLAGS);
  positionalArgs('acp', positionals, []);
  // ACP sessions live on the node the socket reaches: there is nothing to forward (A3S_ROUTE does not apply).
  if (values['no-forward'] === true)
    throw new UsageError('--no-forward does not apply to acp: its sessions live on the node its socket reaches', 'acp');
  const config = resolveCliConfig(values, io);
  const socket = new WebSocket(acpWebSocketUrl(config.url), {
    headers: config.token !== undefined ? { authorization: `Bearer ${config.token}` } : {},
  });
  return new Promise<number>((resolve) => {
    const queued: string[] = [];
    let partial = '';
    let done = false;
    const finish = (code: number, message?: string) => {
      if (done) return;
      done = true;
      if (message) io.err(`a3s acp: ${message}\n`);
      input.off('data', onData);
      input.off('end', onEnd);
      stopInterrupts();
      if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING)
        socket.close(1000, 'bridge closed');
      resolve(code);
    };
    const forward = (line: string) => {
      if (line.trim() === '') return;
      if (socket.readyState === WebSocket.OPEN) socket.send(line);
      else queued.push(line);
    };
    const onData = (chunk: Buffer | string) => {
      partial += chunk.toString();
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      if (Buffer.byteLength(partial) > ACP_MAX_LINE_BYTES) {
        finish(EXIT.failed, `a JSON-RPC line on stdin is longer than ${ACP_MAX_LINE_BYTES} bytes`);
        return;
      }
      for (const line of lines) forward(line.replace(/\r$/, ''));
    };
    const onEnd = () => {
      forward(partial);
      partial = '';
      // Let queued frames go out before the close.
      if (socket.readyState === WebSocket.OPEN) finish(EXIT.ok);
      else socket.once('open', () => finish(EXIT.ok));
    };
    const stopInterrupts = io.onInterrupt(() => finish(EXIT.ok));
    socket.on('open', () => {
      for (const line of queued.splice(0)) socket.send(line);
    });
    socket.on('message', (data) => io.out(`${data.toString().replace(/\n/g, '')}\n`));
    socket.on('close', (code, reason) =>
      finish(
        code === 1000 || code === 1005 ? EXIT.ok : EXIT.failed,
        code === 1000 || code === 1005
          ? undefined
          : `the server closed the connection (${code}${reason.length > 0 ? `: ${reason.toString()}` : ''})`,
      ),
    );
    socket.on('unexpected-response', (_request, response) =>
      finish(
        EXIT.failed,
        `${acpWebSocketUrl(config.url)} answered HTTP ${response.statusCode} instead of a WebSocket upgrade`,
      ),
    );
    socket.on('error', (error) =>
      finish(EXIT.failed, `cannot connect to ${acpWebSocketUrl(config.url)}: ${error.message}`),
    );
    input.on('data', onData);
    input.on('end', onEnd);
  });
}
