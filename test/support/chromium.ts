import { existsSync } from 'node:fs';
import { type Browser, chromium, type LaunchOptions } from 'playwright-core';
import { inject } from 'vitest';
import { locate } from '../prerequisites.mjs';

/**
 * Debian's Chromium (`npx playwright install` cannot run here), or the one CHROMIUM_PATH names: found as the
 * prerequisites check finds it (test/prerequisites.mjs).
 */
export const CHROMIUM = locate('chromium') ?? process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The WebSocket endpoint of the run's one Chromium (test/support/chromium-server.ts), when it started. */
    chromiumEndpoint: string | undefined;
  }
}

/** Headless Chromium as the browser tests drive it, quiet: no first-run pages, updates or background traffic. */
export function chromiumLaunchOptions(): LaunchOptions {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium, or set CHROMIUM_PATH to a Chromium`);
  }
  return {
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
  };
}

/**
 * A browser for one test file. The end-to-end run starts one Chromium for all its files and each file connects to it
 * (a file's contexts and pages are its own, and `close()` only disconnects); a file run on its own outside that
 * project launches its own.
 */
export async function launchChromium(): Promise<Browser> {
  const shared = inject('chromiumEndpoint');
  if (shared !== undefined) return chromium.connect(shared);
  return chromium.launch(chromiumLaunchOptions());
}
