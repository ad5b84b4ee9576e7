import { homedir } from 'node:os';
import { createInterface } from 'node:readline';
import type { CliIo } from './cli-io.js';

/** The CliIo of the running process. */
export function processIo(): CliIo {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    stderrIsTty: process.stderr.isTTY === true,
    stdinIsTty: process.stdin.isTTY === true,
    env: process.env,
    home: process.env.HOME ?? homedir(),
    cwd: process.cwd(),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    readLine: (prompt, signal) =>
      new Promise((resolve) => {
        const rl = createInterface({ input: process.stdin, output: process.stderr });
        let answered = false;
        signal?.addEventListener('abort', () => rl.close(), { once: true });
        rl.question(prompt, (line) => {
          answered = true;
          rl.close();
          resolve(line);
        });
        // Ctrl-C at the prompt: no answer, and the process's SIGINT handlers (cancel the run) hear it.
        rl.on('SIGINT', () => {
          rl.close();
          process.emit('SIGINT');
        });
        rl.on('close', () => {
          if (!answered) resolve(null);
        });
      }),
    onInterrupt: (handler) => {
      process.on('SIGINT', handler);
      return () => void process.off('SIGINT', handler);
    },
  };
}
