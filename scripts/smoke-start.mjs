// CI smoke test of the built server (what `npm start` runs): start dist/src/main.js on a free port with the
// memory store, wait for it to listen, check /healthz, /readyz and the console files, then stop it with SIGTERM.
import { spawn } from 'node:child_process';

const child = spawn(process.execPath, ['dist/src/main.js'], {
  env: { ...process.env, A3S_PORT: '0', A3S_STORAGE_BACKEND: 'memory', A3S_LOG_LEVEL: 'info' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
const deadline = setTimeout(() => fail('the server did not start within 20 s'), 20_000);
function fail(message) {
  console.error(`smoke: ${message}\n${out}`);
  child.kill('SIGKILL');
  process.exit(1);
}
child.on('exit', (code) => {
  if (!url) fail(`the server exited with ${code} before listening`);
});
let url;
child.stdout.on('data', async (chunk) => {
  out += chunk;
  const match = /"url":"(http:\/\/[^"]+)"/.exec(out);
  if (!match || url) return;
  url = match[1];
  clearTimeout(deadline);
  // The console from dist/web too: what `npm start` then opening /console serves.
  for (const path of ['/healthz', '/readyz', '/console/', '/console/console.js', '/console/console.css']) {
    const res = await fetch(url + path).catch((error) => fail(`${path}: ${error.message}`));
    if (!res || res.status !== 200) fail(`${path} answered ${res?.status}`);
  }
  child.kill('SIGTERM');
  child.once('exit', (code) => {
    if (code !== 0) fail(`SIGTERM exit code ${code}`);
    console.log(`smoke: built server answered /healthz, /readyz and the console at ${url} and stopped cleanly`);
    process.exit(0);
  });
});
