import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickNow, launchBrowser, openConsole, waitForText, type ConsolePage } from '../support/browser.js';
import { evaluate, prompt, signIn } from '../support/console-actions.js';
import { startFakeProvider, type FakeProvider, type RecordedRequest } from '../support/fake-provider.js';
import { imageModelProviders } from '../support/image-model.js';
import { startTestServer, tempDir, type TestServer } from '../support/test-server.js';

const A = 'console-conversation-token-01';
// A real 1x1 PNG and a real 1x1 GIF.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
const MAX_BYTES = 4096;

/** Page-side: dispatch `event` ('paste' or 'drop') on `selector` carrying files built from base64 bytes. */
function withFiles(
  selector: string,
  event: 'paste' | 'drop',
  files: Array<{ name: string; type: string; base64: string }>,
): string {
  return `(() => {
    const dt = new DataTransfer();
    for (const f of ${JSON.stringify(files)}) {
      const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
      dt.items.add(new File([bytes], f.name, { type: f.type }));
    }
    const target = document.querySelector(${JSON.stringify(selector)});
    const ev = ${event === 'paste' ? `new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true })` : `new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true })`};
    target.dispatchEvent(ev);
  })()`;
}

function lastUserContent(request: RecordedRequest | undefined): unknown {
  return request?.body.messages.filter((m) => m.role === 'user').at(-1)?.content;
}

describe('the console: attachments, questions, steering (issue 31) in headless Chromium', () => {
  let fake: FakeProvider;
  let t: TestServer;
  let browser: Browser;
  const dir = tempDir('a3s-console-files-');

  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer({
      fake,
      config: {
        providers: imageModelProviders(fake),
        apiTokens: [{ token: A, principal: 'alice', tenantId: 'tenant-a', scopes: ['sessions'] }],
        limits: { maxAttachmentBytes: MAX_BYTES },
      },
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await fake?.close();
  });

  const api = async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const answer = await fetch(`${t.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${A}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: answer.status, body: (await answer.json()) as T };
  };
  /** A session (made over REST unless `id` names one) opened in a signed-in page; `before` runs before the page's scripts. */
  const openSession = async (
    options: { session?: Record<string, unknown>; id?: string; before?: string } = {},
  ): Promise<ConsolePage & { id: string }> => {
    const id =
      options.id ??
      // As the console creates them: offering ask_user (askUser), since the page answers questions.
      (await api<{ session: { id: string } }>('POST', '/v1/sessions', { askUser: true, ...options.session })).body
        .session.id;
    const opened = await openConsole(browser, t.url);
    if (options.before !== undefined) {
      await opened.page.evaluateOnNewDocument(options.before);
      await opened.page.reload({ waitUntil: 'load' });
    }
    await signIn(opened.page, A);
    await opened.page.evaluate(`location.hash = '#/sessions/${id}'`);
    await opened.page.waitForSelector('.session-view .session-head dl');
    return { ...opened, id };
  };

  it('attaches files by the picker, paste and drop; shows upload errors; the run gets image parts; the transcript shows thumbnails', async () => {
    const { page, logs, id } = await openSession();
    const pngPath = join(dir, 'shot.png');
    writeFileSync(pngPath, PNG);
    const picker = (await page.$('#attach-files')) as unknown as { uploadFile(...paths: string[]): Promise<void> };
    await picker.uploadFile(pngPath);
    await page.evaluate(
      withFiles('#prompt', 'paste', [{ name: 'pasted.gif', type: 'image/gif', base64: GIF.toString('base64') }]),
    );
    await page.evaluate(
      withFiles('.prompt-form', 'drop', [
        { name: 'notes.md', type: '', base64: Buffer.from('# ship on friday\n').toString('base64') },
        { name: 'doc.pdf', type: 'application/pdf', base64: Buffer.from('%PDF-1.4').toString('base64') },
        { name: 'big.png', type: 'image/png', base64: Buffer.alloc(MAX_BYTES + 1, 1).toString('base64') },
      ]),
    );
    const chips = () =>
      evaluate<string[]>(page, `[...document.querySelectorAll('.attachment-chip')].map((c) => c.dataset.name)`);
    expect(await chips()).toEqual(['shot.png', 'pasted.gif', 'notes.md', 'doc.pdf', 'big.png']);
    // Image chips preview their own bytes as data: URLs.
    await page.waitForFunction(
      `document.querySelectorAll('.attachment-chip img.attachment-preview[src^="data:image/"]').length === 3`,
    );

    // Send: two uploads fail (400 unknown type, 413 too large); each chip says why, and no run starts.
    await page.type('#prompt', 'What do these show?');
    await page.keyboard.press('Enter');
    await waitForText(page, '.prompt-form .form-status', 'could not be uploaded');
    const failed = await evaluate<Record<string, string>>(
      page,
      `Object.fromEntries([...document.querySelectorAll('.attachment-chip.is-failed')].map((c) => [c.dataset.name, c.querySelector('.attachment-status').textContent]))`,
    );
    expect(Object.keys(failed)).toEqual(['doc.pdf', 'big.png']);
    expect(failed['doc.pdf']).toBe(
      'VALIDATION_ERROR: headers.content-type: "application/pdf" is not accepted: images (image/png, image/jpeg, image/gif, image/webp) and text/* only',
    );
    expect(failed['big.png']).toBe(
      `PAYLOAD_TOO_LARGE: body: ${MAX_BYTES + 1} bytes exceed limits.maxAttachmentBytes (${MAX_BYTES} bytes)`,
    );
    expect(t.fake.requests.length).toBe(0);
    const uploaded = (
      await api<{ attachments: Array<{ name?: string; type: string }> }>('GET', `/v1/sessions/${id}/attachments`)
    ).body.attachments;
    expect(uploaded.map((a) => a.type)).toEqual(['image', 'image', 'file']);

    // Remove the two, send again: only the run starts (the three uploads are not repeated).
    await clickNow(page, '.attachment-chip[data-name="doc.pdf"] .attachment-remove');
    await clickNow(page, '.attachment-chip[data-name="big.png"] .attachment-remove');
    expect(await chips()).toEqual(['shot.png', 'pasted.gif', 'notes.md']);
    t.fake.script({ text: 'A pixel, another pixel, and notes.' });
    await clickNow(page, '.prompt-form button[type=submit]');
    await waitForText(page, '.log .run-end', 'completed');
    expect(await chips()).toEqual([]);
    expect(
      (await api<{ attachments: unknown[] }>('GET', `/v1/sessions/${id}/attachments`)).body.attachments,
    ).toHaveLength(3);
    expect(lastUserContent(t.fake.requests.at(-1))).toEqual([
      { type: 'text', text: 'What do these show?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
      { type: 'image_url', image_url: { url: `data:image/gif;base64,${GIF.toString('base64')}` } },
      { type: 'text', text: 'notes.md:\n# ship on friday\n' },
    ]);

    // The transcript: the images as data: thumbnails (fetched with the token), the text file as a chip.
    await page.waitForFunction(
      `[...document.querySelectorAll('.transcript img.attachment-thumb')].filter((i) => i.complete && i.naturalWidth === 1).length === 2`,
      { timeout: 10_000 },
    );
    const thumbs = await evaluate<string[]>(
      page,
      `[...document.querySelectorAll('.transcript img.attachment-thumb')].map((i) => i.src)`,
    );
    expect(thumbs).toEqual([
      `data:image/png;base64,${PNG.toString('base64')}`,
      `data:image/gif;base64,${GIF.toString('base64')}`,
    ]);
    await waitForText(page, '.transcript .attachment-file', 'notes.md');
    // No CSP violation, no script error (the sign-in probe's 401 and the two refused uploads are the only errors).
    expect(logs.filter((l) => l.startsWith('pageerror') || /content security policy/i.test(l))).toEqual([]);
    t.fake.assertDone();
  });

  it('a question is a form: an option button answers it and the model gets the answer; one answered elsewhere says 409', async () => {
    const { page, id } = await openSession();
    t.fake.script(
      {
        toolCalls: [
          { id: 'c_q1', name: 'ask_user', arguments: { question: 'Which database?', options: ['postgres', 'sqlite'] } },
        ],
      },
      { text: 'Using sqlite.' },
    );
    const runId = await prompt(page, 'Set up the db', 0);
    const form = `.run[data-run-id="${runId}"] .question`;
    await page.waitForSelector(`${form} .question-option[data-option="sqlite"]`);
    await waitForText(page, form, 'Which database?');
    // Free text is allowed by default: the field shows beside the options.
    expect(await evaluate<number>(page, `document.querySelectorAll('${form} input.question-text').length`)).toBe(1);
    await clickNow(page, `${form} .question-option[data-option="sqlite"]`);
    await waitForText(page, `${form} .question-status`, 'Answered: sqlite');
    await waitForText(page, `.run[data-run-id="${runId}"] .run-end`, 'completed');
    expect(
      await evaluate<boolean>(
        page,
        `[...document.querySelectorAll('${form} button, ${form} input')].every((c) => c.disabled)`,
      ),
    ).toBe(true);
    const tool = t.fake.requests.at(-1)?.body.messages.find((m) => m.role === 'tool');
    expect(tool?.content).toBe('The user chose: sqlite');

    // A page whose event stream cannot open shows the pending question from GET .../questions; answered
    // elsewhere first, its answer is refused with 409 QUESTION_SETTLED and the form says so.
    t.fake.script(
      {
        toolCalls: [
          {
            id: 'c_q2',
            name: 'ask_user',
            arguments: { question: 'Deploy now?', options: ['yes', 'no'], allow_free_text: false },
          },
        ],
      },
      { text: 'Not deploying.' },
    );
    const second = (await api<{ runId: string }>('POST', `/v1/sessions/${id}/runs`, { input: 'deploy?' })).body.runId;
    let questionId = '';
    for (let i = 0; i < 100 && questionId === ''; i++) {
      const list = (await api<{ questions: Array<{ questionId: string }> }>('GET', `/v1/sessions/${id}/questions`)).body
        .questions;
      questionId = list[0]?.questionId ?? '';
      if (questionId === '') await new Promise((r) => setTimeout(r, 50));
    }
    expect(questionId).not.toBe('');
    const other = await openSession({
      id,
      before: `window.WebSocket = class { constructor() { throw new Error('no sockets here'); } };`,
    });
    const pending = `.run[data-run-id="${second}"] .question[data-question-id="${questionId}"]`;
    await other.page.waitForSelector(`${pending} .question-option[data-option="no"]`);
    expect(
      await evaluate<number>(other.page, `document.querySelectorAll('${pending} input.question-text').length`),
    ).toBe(0);
    expect((await api('POST', `/v1/sessions/${id}/questions/${questionId}`, { option: 'no' })).status).toBe(200);
    await clickNow(other.page, `${pending} .question-option[data-option="yes"]`);
    await waitForText(other.page, `${pending} .question-status`, '409 QUESTION_SETTLED');
    // The first page saw it settle through the call's tool_end.
    await waitForText(page, `.run[data-run-id="${second}"] .question .question-status`, 'Answered: no');
    await waitForText(page, `.run[data-run-id="${second}"] .run-end`, 'completed');
    t.fake.assertDone();
  });

  it('Decline declines the question: the model is told, and the form says so', async () => {
    const { page } = await openSession();
    t.fake.script(
      { toolCalls: [{ id: 'c_qd', name: 'ask_user', arguments: { question: 'Your phone number?' } }] },
      { text: 'Fine, going on.' },
    );
    const runId = await prompt(page, 'Sign me up', 0);
    const form = `.run[data-run-id="${runId}"] .question`;
    await page.waitForSelector(`${form} .question-decline:not([disabled])`);
    await clickNow(page, `${form} .question-decline`);
    await waitForText(page, `${form} .question-status`, 'Declined');
    await waitForText(page, `.run[data-run-id="${runId}"] .run-end`, 'completed');
    const tool = t.fake.requests.at(-1)?.body.messages.find((m) => m.role === 'tool' && m.tool_call_id === 'c_qd');
    expect(String(tool?.content)).toContain('The user declined to answer');
    t.fake.assertDone();
  });

  it('a question nobody answers times out: the form says so and is disabled', async () => {
    const { page } = await openSession({ session: { confirmationPolicy: { enabled: false, defaultTimeoutMs: 600 } } });
    t.fake.script(
      { toolCalls: [{ id: 'c_q3', name: 'ask_user', arguments: { question: 'Anyone there?' } }] },
      { text: 'Nobody answered; going on.' },
    );
    const runId = await prompt(page, 'Ask me something', 0);
    const form = `.run[data-run-id="${runId}"] .question`;
    await page.waitForSelector(`${form} input.question-text:not([disabled])`);
    await waitForText(page, `${form} .question-status`, 'Timed out: no answer within 600 ms');
    expect(
      await evaluate<boolean>(
        page,
        `[...document.querySelectorAll('${form} button, ${form} input')].every((c) => c.disabled)`,
      ),
    ).toBe(true);
    await waitForText(page, `.run[data-run-id="${runId}"] .run-end`, 'completed');
    t.fake.assertDone();
  });

  it('steers a run while its tool runs (a "steered" line, a user message of the next request) and interrupts one', async () => {
    const { page } = await openSession({
      session: { permissionPolicy: { allow: ['bash'], defaultDecision: 'allow' } },
    });
    const slow = (id: string) => ({
      toolCalls: [{ id, name: 'bash', arguments: { command: 'sleep 1.5; echo slept' } }],
    });
    t.fake.script(slow('c_s1'), { text: 'Using tabs.' });
    const runId = await prompt(page, 'Reformat the file', 0);
    await page.waitForSelector(`.run[data-run-id="${runId}"] [data-tool-id="c_s1"]`);
    await page.waitForSelector('.steer-btn:not([disabled])');
    await evaluate(page, `document.querySelector('#prompt').value = 'use tabs, not spaces'`);
    await clickNow(page, '.steer-btn');
    await waitForText(page, '.prompt-form .form-status', 'Steer accepted');
    await waitForText(page, `.run[data-run-id="${runId}"] .run-end`, 'completed');
    const steered = await evaluate<string>(
      page,
      `document.querySelector('.run[data-run-id="${runId}"] .message-steered').textContent`,
    );
    expect(steered).toContain('steered');
    expect(steered).toContain('use tabs, not spaces');
    expect(t.fake.requests.at(-1)?.body.messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'use tabs, not spaces',
    });
    await page.waitForSelector('.steer-btn[disabled]');

    t.fake.script(slow('c_i1'));
    const stopped = await prompt(page, 'A long job', 1);
    await page.waitForSelector(`.run[data-run-id="${stopped}"] [data-tool-id="c_i1"]`);
    await page.waitForSelector('.interrupt-btn:not([disabled])');
    await clickNow(page, '.interrupt-btn');
    await waitForText(page, '.prompt-form .form-status', 'Interrupt accepted');
    await waitForText(page, `.run[data-run-id="${stopped}"] .run-end`, 'cancelled');
    await waitForText(page, `.run[data-run-id="${stopped}"] .run-interrupted`, 'interrupted from the console');
    // The tool round it interrupted after finished and stays.
    await waitForText(page, `.run[data-run-id="${stopped}"] [data-tool-id="c_i1"] .tool-output`, 'slept');
    t.fake.assertDone();
  });
});
