import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { CHROMIUM, chromiumLaunchOptions } from './chromium.js';

/**
 * The end-to-end project's global setup: one Chromium for the whole run, which every browser test file connects to
 * instead of starting its own. Where Chromium is missing nothing starts, and each browser test says what to install.
 */
export default async function startSharedChromium(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!existsSync(CHROMIUM)) return undefined;
  const server = await chromium.launchServer(chromiumLaunchOptions());
  project.provide('chromiumEndpoint', server.wsEndpoint());
  return () => server.close();
}
