// Regenerates docs/console.png, the README's picture of the console's session page.
// Run after `npm run build`:  node scripts/console-screenshot.mjs [out.png]
// It starts the built server on a random loopback port with a scripted OpenAI-compatible fake provider
// (inline below), opens the console in Debian's headless Chromium (puppeteer-core, no download), runs a
// prompt whose model reads a file and answers, records a verification with one passing and one failing
// check, starts a second run that waits for a confirmation, and saves a 1280x900 PNG of the page.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(process.argv[2] ?? join(root, 'docs', 'console.png'));
for (const built of ['dist/src/server/start-server.js', 'dist/web/console.js']) {
  if (!existsSync(join(root, built))) throw new Error(`${built} is missing: run npm run build first`);
}
const { startServer } = await import(join(root, 'dist/src/server/start-server.js'));
const { CodeConfigSchema } = await import(join(root, 'dist/src/config/code-config.js'));
const { pino } = await import('pino');

/** The scripted answers of the fake model, one per provider call, in order. */
const script = [
  { toolCalls: [{ id: 'call_read_1', name: 'read', arguments: { file_path: 'RELEASE.md' } }] },
  {
    text: 'RELEASE.md plans 0.4.0 for Friday: the console, SSE streams and the typed client. Two items are still open: the migration guide and the changelog entry for the WebSocket auth message.',
  },
  {
    toolCalls: [
      {
        id: 'call_write_1',
        name: 'write',
        arguments: {
          file_path: 'CHANGELOG.md',
          content:
            '## 0.4.0\n\n- Web console at /console\n- SSE and AG-UI streams\n- Typed client for Node and browsers\n',
        },
      },
    ],
  },
];

/** A minimal OpenAI-compatible chat-completions endpoint that streams the scripted steps. */
function startFake() {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}');
      const step = script.shift();
      if (req.url !== '/v1/chat/completions' || !step) {
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `unexpected request ${req.url}` } }));
        return;
      }
      const chunk = (delta, finish = null) => ({
        id: 'chatcmpl-shot',
        object: 'chat.completion.chunk',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, delta, finish_reason: finish }],
      });
      const events = [chunk({ role: 'assistant', content: '' })];
      if (step.text) for (const word of step.text.split(/(?<= )/)) events.push(chunk({ content: word }));
      for (const [index, call] of (step.toolCalls ?? []).entries()) {
        events.push(
          chunk({
            tool_calls: [
              {
                index,
                id: call.id,
                type: 'function',
                function: { name: call.name, arguments: JSON.stringify(call.arguments) },
              },
            ],
          }),
        );
      }
      events.push(chunk({}, step.toolCalls ? 'tool_calls' : 'stop'));
      events.push({
        id: 'chatcmpl-shot',
        object: 'chat.completion.chunk',
        created: 0,
        model: body.model,
        choices: [],
        usage: { prompt_tokens: 812, completion_tokens: 64, total_tokens: 876 },
      });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

const fake = await startFake();
const dataDir = realpathSync(mkdtempSync(join(tmpdir(), 'a3s-shot-data-')));
// A fixed workspace path, so the picture only changes when the page does (run ids aside).
const workspace = join(realpathSync(tmpdir()), 'a3s-console-screenshot');
rmSync(workspace, { recursive: true, force: true });
mkdirSync(workspace);
writeFileSync(
  join(workspace, 'RELEASE.md'),
  '# Release 0.4.0 (Friday)\n\n- [x] Web console at /console\n- [x] SSE and AG-UI streams\n- [x] Typed client\n- [ ] Migration guide\n- [ ] Changelog entry: WebSocket auth message\n',
);
const config = CodeConfigSchema.parse({
  defaultModel: 'openai/gpt-4.1',
  providers: {
    openai: { apiKey: 'sk-screenshot', baseUrl: `http://127.0.0.1:${fake.address().port}/v1`, maxRetries: 0 },
  },
  dataDir,
  sessionsDir: join(dataDir, 'sessions'),
  host: '127.0.0.1',
  port: 0,
  workspaceRoots: [workspace],
  logLevel: 'silent',
  sandbox: { hostDirect: 'none' },
});
const server = await startServer(config, { logger: pino({ level: 'silent' }) });
const api = async (method, path, body) => {
  const answer = await fetch(`${server.url}${path}`, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${await answer.text()}`);
  return answer.json();
};
const chromium = [process.env.CHROMIUM_PATH, '/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find(
  (p) => p && existsSync(p),
);
if (!chromium) throw new Error("no Chromium: install Debian's chromium-headless-shell or set CHROMIUM_PATH");
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--hide-scrollbars'],
});
try {
  const { session } = await api('POST', '/v1/sessions', {
    sessionId: 'release-0.4',
    workspace,
    permissionPolicy: { allow: ['read', 'glob', 'grep', 'ls'], defaultDecision: 'ask' },
    confirmationPolicy: { enabled: true, defaultTimeoutMs: 600_000 },
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900, deviceScaleFactor: 1 });
  await page.goto(`${server.url}/console/#/sessions/${session.id}`, { waitUntil: 'load' });
  await page.waitForFunction(`document.querySelector('.connection')?.textContent?.includes('Live')`);
  const waitFor = (expression) => page.waitForFunction(expression, { timeout: 15_000 });

  await page.type('#prompt', 'Read RELEASE.md and tell me what is left before Friday.');
  await page.keyboard.press('Enter');
  await waitFor(`document.querySelector('.run-end')?.textContent?.includes('completed')`);
  await api('POST', `/v1/sessions/${session.id}/verifications`, {
    subject: 'release checks',
    commands: [
      { id: 'unit', command: 'echo "42 tests passed"', kind: 'test', required: true, description: 'unit tests' },
      {
        id: 'changelog',
        command: 'grep -q "0.4.0" CHANGELOG.md',
        kind: 'lint',
        required: true,
        description: 'changelog names the release',
      },
    ],
  });
  await waitFor(`document.querySelector('.log .verification') !== null`);
  await page.type('#prompt', 'Add the 0.4.0 entry to CHANGELOG.md.');
  await page.keyboard.press('Enter');
  await waitFor(`document.querySelector('.confirm[data-tool-id="call_write_1"]') !== null`);
  // Let the runs list settle.
  await new Promise((ok) => setTimeout(ok, 600));
  await page.evaluate(`document.activeElement?.blur(); window.scrollTo(0, 0)`);
  mkdirSync(dirname(out), { recursive: true });
  await page.screenshot({ path: out, type: 'png' });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
  await server.close();
  fake.close();
  rmSync(workspace, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
}
