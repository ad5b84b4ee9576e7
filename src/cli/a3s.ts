#!/usr/bin/env node
// The `a3s` command (package.json "bin"): run the CLI on this process's arguments and exit with its code.
import { processIo } from './process-io.js';
import { runCli } from './run-cli.js';

const code = await runCli(process.argv.slice(2), processIo());
// Let stdout and stderr drain before exiting (a pipe may still hold the last lines).
process.exitCode = code;
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
