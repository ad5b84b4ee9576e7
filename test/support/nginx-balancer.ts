import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { findFreePorts } from './free-ports.js';
import { tempDir } from './test-server.js';

/** Debian's nginx binary (install-test-deps.sh installs the package). */
export function nginxBinary(): string {
  for (const candidate of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (existsSync(candidate)) return candidate;
  const found = spawnSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' }).stdout.trim();
  if (found === '') throw new Error('nginx is not installed: run scripts/install-test-deps.sh');
  return found;
}

/** A running nginx in front of test nodes. */
export interface NginxBalancer {
  /** `http://127.0.0.1:<port>`: what clients talk to. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Start Debian's nginx with the shipped deploy/nginx.conf, templated only where a test must differ: the
 * upstream servers become the given loopback `host:port`s, the listen port a free one, and the pid, logs
 * and temp files go to a temp prefix (so it runs beside anything else). Plain round-robin, as shipped.
 */
export async function startNginx(upstreams: readonly string[]): Promise<NginxBalancer> {
  const shipped = readFileSync(join(process.cwd(), 'deploy', 'nginx.conf'), 'utf8');
  const [port] = await findFreePorts(1);
  const prefix = tempDir('a3s-nginx-');
  mkdirSync(join(prefix, 'logs'));
  const servers = upstreams.map((upstream) => `    server ${upstream};`).join('\n');
  const conf = shipped
    .replace(/ {4}server server-a:8080;\n {4}server server-b:8080;/, servers)
    .replace('listen 8080;', `listen 127.0.0.1:${port};`)
    .replace(
      'events {}',
      `pid ${join(prefix, 'nginx.pid')};\nerror_log ${join(prefix, 'logs', 'error.log')} warn;\nevents {}`,
    );
  if (!conf.includes(servers) || !conf.includes(`listen 127.0.0.1:${port};`))
    throw new Error('deploy/nginx.conf no longer has the upstream and listen lines the test templates');
  const file = join(prefix, 'nginx.conf');
  writeFileSync(file, conf);
  const child: ChildProcess = spawn(nginxBinary(), ['-p', prefix, '-c', file, '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not start: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}
