import type { Page } from 'puppeteer-core';
import { waitForText } from './browser.js';

/** Evaluate a page-side expression (the test project has no DOM types: expressions are strings). */
export function evaluate<T>(page: Page, expression: string): Promise<T> {
  return page.evaluate(expression) as Promise<T>;
}

/** Sign in with `token` on the console's form and wait for the sessions list. */
export async function signIn(page: Page, token: string): Promise<void> {
  await page.waitForSelector('#token');
  await page.type('#token', token);
  await page.keyboard.press('Enter');
  await page.waitForSelector('.sessions-view');
}

/** Create a session from the page's form with a policy preset; answers its id (from the URL it navigates to). */
export async function createInPage(page: Page, preset: string): Promise<string> {
  await page.waitForSelector('#new-policy');
  await page.select('#new-policy', preset);
  await page.click('.sessions-view form button[type=submit]');
  await page.waitForSelector('.session-view .session-head dl');
  const hash = await evaluate<string>(page, 'location.hash');
  return decodeURIComponent(hash.replace('#/sessions/', ''));
}

/** Type a prompt and press Enter; answers the id of the run the page shows for it. */
export async function prompt(page: Page, text: string, runsBefore: number): Promise<string> {
  await page.waitForSelector('.connection');
  await waitForText(page, '.connection', 'Live');
  await page.type('#prompt', text);
  await page.keyboard.press('Enter');
  await page.waitForFunction(`document.querySelectorAll('.log .run[data-run-id]').length > ${runsBefore}`, {
    timeout: 10_000,
  });
  return evaluate<string>(page, `[...document.querySelectorAll('.log .run[data-run-id]')].at(-1).dataset.runId`);
}
