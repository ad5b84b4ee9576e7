import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import request from 'supertest';
import { toolMessage } from '../support/run-helpers.js';
import type { TestServer } from '../support/test-server.js';

/** True when bubblewrap is installed and runs a trivial sandbox here. */
export function bwrapWorks(): boolean {
  try {
    execFileSync(
      'bwrap',
      [
        '--unshare-all',
        '--die-with-parent',
        '--ro-bind',
        '/usr',
        '/usr',
        '--symlink',
        'usr/bin',
        '/bin',
        '--symlink',
        'usr/lib',
        '/lib',
        '--symlink',
        'usr/lib64',
        '/lib64',
        '--',
        '/usr/bin/true',
      ],
      { stdio: 'ignore' },
    );
    return true;
  } catch {
    return false;
  }
}

/** Host pids whose command line contains `marker` (the host's own process table, not the sandbox's). */
export function hostProcessesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      continue;
    }
    if (cmdline.includes(marker)) found.push(Number(entry));
  }
  return found;
}

let counter = 0;

/** Have the (fake) model call bash with `command` in a run of the session; returns what the model saw. */
export async function modelBash(
  t: TestServer,
  sessionId: string,
  command: string,
  auth?: string,
  timeout?: number,
): Promise<string> {
  counter += 1;
  const id = `c_sbx_${counter}`;
  t.fake.script(
    { toolCalls: [{ id, name: 'bash', arguments: { command, ...(timeout ? { timeout } : {}) } }] },
    { text: 'done' },
  );
  const req = request(t.url).post(`/v1/sessions/${sessionId}/runs`);
  if (auth) req.set('authorization', `Bearer ${auth}`);
  const run = await req.send({ input: 'run it', wait: true }).expect(200);
  if (run.body.run.status !== 'completed')
    throw new Error(`run ${run.body.run.status}: ${JSON.stringify(run.body.run.error)}`);
  return toolMessage(t, id);
}
