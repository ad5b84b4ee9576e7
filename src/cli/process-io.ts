import { homedir } from 'node:os';
import type { CliIo } from './cli-io.js';

/** The CliIo of the running process. */
export function processIo(): CliIo {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    stderrIsTty: process.stderr.isTTY === true,
    env: process.env,
    home: process.env.HOME ?? homedir(),
    cwd: process.cwd(),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    onInterrupt: (handler) => {
      process.on('SIGINT', handler);
      return () => void process.off('SIGINT', handler);
    },
  };
}
