import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { openThread, useSandboxPage } from '../support/sandbox-page.js';

/**
 * The whole product through the sandbox page in a real browser: `npm start`'s stack (dynalite, the local Step
 * Functions endpoint on the real handlers, the demo cluster, the Slack stand-in) and the Lambda's Slack handler,
 * driven by clicks and typing as a person would.
 */

const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts');
const DOCS_SCREENSHOT = join(import.meta.dirname, '..', '..', 'docs', 'sandbox.png');
const WAIT = 60_000;

const USERS = { requester: 'UREQUESTER', senior: 'USENIOR', engineer: 'UENGINEER' } as const;

const sandbox = useSandboxPage();

async function actAs(user: string): Promise<void> {
  await sandbox.page.selectOption('#persona', user);
}

function thread(): Locator {
  return sandbox.page.locator('#thread');
}

/** A bot message in the open thread, by text it contains. */
function threadMessage(text: string | RegExp): Locator {
  return thread().locator('.msg', { hasText: text });
}

/** The same message after the bot rewrites it (a decided approval keeps its ts, not its text). */
async function pinned(message: Locator): Promise<Locator> {
  const ts = await message.getAttribute('data-ts');
  return thread().locator(`.msg[data-ts="${ts}"]`);
}

async function replyInThread(text: string): Promise<void> {
  await sandbox.page.fill('#thread-input', text);
  await sandbox.page.press('#thread-input', 'Enter');
}

describe('the Slack sandbox in a browser', () => {
  it('runs /triage, approves a handoff, refuses break-glass to the requester and grants it to the senior', async () => {
    await sandbox.page.goto(`${sandbox.running.sandboxUrl}?user=${USERS.requester}&channel=incidents`);
    await sandbox.page.waitForSelector('body[data-ready="true"]');

    // /triage on a demo namespace: the thread root appears in the channel, the envelope in its thread.
    await sandbox.page.fill('#composer-input', '/triage crashloop in orders');
    await sandbox.page.press('#composer-input', 'Enter');
    const root = sandbox.page.locator('#messages .msg', { hasText: 'requested by' }).first();
    await openThread(sandbox.page, root.locator('.thread-link'), WAIT);
    await expect
      .poll(() => thread().locator('.blk-header', { hasText: 'Triage: crashloop-analysis in orders' }).count(), {
        timeout: WAIT,
      })
      .toBe(1);
    await expect.poll(() => thread().textContent(), { timeout: WAIT }).toContain('CONTAINER_CRASHLOOP_CONFIG_ERROR');
    if (process.env['CALMOPS_UPDATE_DOCS_SCREENSHOT'] === '1') {
      await expect.poll(() => thread().textContent(), { timeout: WAIT }).toContain('operational memory');
      await sandbox.page.evaluate(() =>
        document.querySelector('#thread .blk-header')?.scrollIntoView({ block: 'start' }),
      );
      await sandbox.page.screenshot({ path: DOCS_SCREENSHOT });
    }

    // An ask-first handoff, asked for in the thread and approved by another engineer.
    await replyInThread('consult the network specialist please');
    const proposal = threadMessage('Shall I consult the Network specialist');
    await proposal.getByRole('button', { name: 'Yes, consult' }).waitFor({ timeout: WAIT });
    const handoff = await pinned(proposal);
    await actAs(USERS.engineer);
    await handoff.getByRole('button', { name: 'Yes, consult' }).click();
    await expect.poll(() => handoff.textContent(), { timeout: WAIT }).toMatch(/Approved/);
    expect(await handoff.getByRole('button').count()).toBe(0);

    // Break-glass: the requester fills the modal; naming themselves as approver is refused under the field.
    await actAs(USERS.requester);
    const modal = sandbox.page.locator('#modal');
    const openForm = async (approver: string) => {
      await sandbox.page.fill('#composer-input', '/triage breakglass');
      await sandbox.page.press('#composer-input', 'Enter');
      await modal.waitFor({ state: 'visible', timeout: WAIT });
      await expect.poll(() => sandbox.page.locator('#modal-title').textContent()).toBe('Break glass');
      await modal
        .locator('textarea[data-block-id="justification"]')
        .fill('Checkout is down for every customer and the crash loop blocks all orders; waiting costs more.');
      await modal.locator('select[data-block-id="seniorApprover"]').selectOption(approver);
      // The form offers the states after the one the session was in when it opened; the session may move on before
      // the submit (GATHERING ends by itself), and TESTING, which takes a person's choice, stays later than it.
      await modal.locator('select[data-block-id="skipToState"]').selectOption('TESTING');
      await sandbox.page.click('#modal-submit');
    };
    await openForm(USERS.requester);
    const approverError = modal.locator('.blk-input[data-block-id="seniorApprover"] .inp-error');
    await approverError.waitFor({ timeout: WAIT });
    expect(await approverError.textContent()).toMatch(/\S/);
    await sandbox.page.click('#modal-cancel');
    await modal.waitFor({ state: 'hidden', timeout: WAIT });
    await openForm(USERS.senior);
    await modal.waitFor({ state: 'hidden', timeout: WAIT });

    // The senior's buttons: the requester's click is refused, visible only to the requester.
    const request = threadMessage('do you approve the break-glass override');
    await request.getByRole('button', { name: 'Approve override' }).waitFor({ timeout: WAIT });
    const approval = await pinned(request);
    await approval.getByRole('button', { name: 'Approve override' }).click();
    const refusal = sandbox.page
      .locator('.msg-ephemeral', { hasText: 'Only visible to you' })
      .filter({ hasNotText: 'Triage started' });
    await expect.poll(() => refusal.count(), { timeout: WAIT }).toBeGreaterThan(0);
    expect(await approval.getByRole('button', { name: 'Approve override' }).count()).toBe(1);

    // The senior does not see the requester's ephemeral refusal, and approves.
    await actAs(USERS.senior);
    await expect.poll(() => refusal.count()).toBe(0);
    await approval.getByRole('button', { name: 'Approve override' }).click();
    await expect.poll(() => approval.textContent(), { timeout: WAIT }).toMatch(/Approved by @sam/);
    await expect.poll(() => thread().textContent(), { timeout: WAIT }).toContain('Override granted');

    await mkdir(ARTIFACTS, { recursive: true });
    await sandbox.page.screenshot({ path: join(ARTIFACTS, 'sandbox-flow.png') });
  });
});
