import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { type RunningCalmops, startCalmops } from '../../local/start.js';
import { launchChromium } from './chromium.js';
import { startedForSuite } from './suite-lifecycle.js';

/**
 * The sandbox page in a real browser, as the browser tests open it: `npm start`'s whole stack in this process (dynalite,
 * the local Step Functions endpoint on the real handlers, the demo cluster, the Slack stand-in) on a fresh data
 * directory and a free port, and a Chromium page on a desktop-sized window.
 */
export interface SandboxPage {
  running: RunningCalmops;
  page: Page;
  close(): Promise<void>;
}

export interface SandboxPageOptions {
  /** `npm start`'s environment, e.g. `CALMOPS_MIN_TIME_IN_STATE_SECONDS: '0'` for a test that types faster than a person reads. */
  env?: Record<string, string>;
  /** Opens the sandbox as this user in #incidents and waits until it has drawn; the page stays blank when absent. */
  openAs?: string;
}

async function openSandboxPage(options: SandboxPageOptions = {}): Promise<SandboxPage> {
  const dataDir = await mkdtemp(join(tmpdir(), 'calmops-sandbox-page-'));
  const closers: Array<() => Promise<unknown>> = [() => rm(dataDir, { recursive: true, force: true })];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    // A generous ack timeout: the first request builds the Slack app, and this machine is shared.
    const running = await startCalmops({
      env: options.env ?? {},
      dataDir,
      port: 0,
      logLevel: 'SILENT',
      ackTimeoutMs: 30_000,
    });
    closers.push(() => running.close());
    const browser = await launchChromium();
    closers.push(() => browser.close());
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    if (options.openAs !== undefined) {
      await page.goto(`${running.sandboxUrl}?user=${options.openAs}&channel=incidents`);
      await page.waitForSelector('body[data-ready="true"]');
    }
    return { running, page, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The sandbox page for the enclosing file or `describe`: opened before its tests, closed after them. */
export function useSandboxPage(options: SandboxPageOptions = {}): SandboxPage {
  return startedForSuite(() => openSandboxPage(options), 120_000);
}

/**
 * Opens the thread of a message in the side pane, through its "N replies" link. The channel is drawn again whenever
 * the bot posts, so a click can land while the list is being replaced and open nothing: the link is clicked again
 * until the pane shows that message's thread.
 */
export async function openThread(page: Page, link: Locator, timeout: number): Promise<void> {
  await expect
    .poll(
      async () => {
        const ts = await link.getAttribute('data-open-thread', { timeout });
        await link.click({ timeout });
        return page.locator(`#thread-messages .msg[data-ts="${ts}"]`).count();
      },
      { timeout },
    )
    .toBeGreaterThan(0);
}
