import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { locate } from '../prerequisites.mjs';

/**
 * Debian's Chromium (`npx playwright install` cannot run here), or the one CHROMIUM_PATH names: found as the
 * prerequisites check finds it (test/prerequisites.mjs).
 */
const CHROMIUM = locate('chromium') ?? process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** Headless Chromium as the browser tests drive it, quiet: no first-run pages, updates or background traffic. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium, or set CHROMIUM_PATH to a Chromium`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
