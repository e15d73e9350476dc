import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DEMO_NAMESPACES } from '../../local/demo/index.js';
import { openThread, useSandboxPage } from '../support/sandbox-page.js';

/**
 * Typed reads in a real browser: in every broken demo namespace, each SAFE next action of the envelope, typed
 * verbatim into the thread, is answered and never met with the calming intervention; a long answer shows its first
 * lines and the whole text as a file in the thread.
 */

const WAIT = 60_000;
const REQUESTER = 'UREQUESTER';

const sandbox = useSandboxPage({ env: { CALMOPS_MIN_TIME_IN_STATE_SECONDS: '0' } });

function thread(): Locator {
  return sandbox.page.locator('#thread');
}

async function openTriage(command: string): Promise<void> {
  await sandbox.page.goto(`${sandbox.running.sandboxUrl}?user=${REQUESTER}&channel=incidents`);
  await sandbox.page.waitForSelector('body[data-ready="true"]');
  // The same request may have opened a thread before: the new one is the root that was not there yet.
  const roots = sandbox.page.locator('#messages .msg', { hasText: command.replace(/^\/triage /, '') });
  const tsOf = () => roots.evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset['ts']));
  const before = new Set(await tsOf());
  await sandbox.page.fill('#composer-input', command);
  await sandbox.page.press('#composer-input', 'Enter');
  let rootTs: string | undefined;
  await expect
    .poll(
      async () => {
        rootTs = (await tsOf()).find((ts) => ts !== undefined && !before.has(ts));
        return rootTs;
      },
      { timeout: WAIT },
    )
    .toBeDefined();
  await openThread(sandbox.page, sandbox.page.locator(`#messages .msg[data-ts="${rootTs}"] .thread-link`), WAIT);
  await expect.poll(() => thread().textContent(), { timeout: WAIT }).toMatch(/Next actions|SAFE/);
}

/** The SAFE reads the envelope offers, as its code spans show them. */
async function safeReads(): Promise<string[]> {
  const codes = await thread().locator('code').allTextContents();
  return [...new Set(codes.map((c) => c.trim()))].filter((c) =>
    /^(?:kubectl|oc) (?:get|describe|logs|events|top)\b/.test(c),
  );
}

describe('typed reads in the sandbox, in a browser', () => {
  for (const demo of DEMO_NAMESPACES.filter((d) => d.expectedRootCause !== undefined)) {
    it(`answers every SAFE next action in ${demo.namespace} typed verbatim, without an intervention`, async () => {
      await openTriage(demo.try);
      const reads = await safeReads();
      expect(reads.length).toBeGreaterThan(0);
      for (const read of reads) {
        const before = await thread().locator('.msg').count();
        await sandbox.page.fill('#thread-input', read);
        await sandbox.page.press('#thread-input', 'Enter');
        await expect
          .poll(
            async () => {
              const texts = await thread().locator('.msg').allTextContents();
              return texts.slice(before + 1).join('\n');
            },
            { timeout: WAIT },
          )
          .toMatch(/🔍|⚪|❌|⛔|I did not run|:mag:|:no_entry:|lines?\b/);
        const after = (await thread().locator('.msg').allTextContents()).slice(before).join('\n');
        expect(after, read).not.toContain('Hold on');
      }
    }, 300_000);
  }

  it('shows a long answer as its first lines and the whole text as a file in the thread', async () => {
    await openTriage(DEMO_NAMESPACES.find((d) => d.namespace === 'payments')?.try ?? '/triage payments');
    await sandbox.page.fill('#thread-input', 'kubectl describe nodes');
    await sandbox.page.press('#thread-input', 'Enter');
    await expect.poll(() => thread().textContent(), { timeout: WAIT }).toMatch(/first \d+ of \d+ lines/);
    const file = thread().locator('.msg-file').last();
    await expect.poll(() => file.count(), { timeout: WAIT }).toBe(1);
    expect(await file.locator('.file-snippet').textContent()).toContain('Allocated resources:');
  }, 120_000);
});
