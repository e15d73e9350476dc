import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DEMO_NAMESPACES, type DemoNamespace } from '../../local/demo/index.js';
import { openThread, useSandboxPage } from '../support/sandbox-page.js';

/**
 * A specialist handoff in every demo namespace, in a real browser on the sandbox page: calmops proposes a specialist
 * only where the evidence asks for one (never in the healthy wiki), asking for one never blocks the thread (a read is
 * answered while the proposal waits), and the approved specialist's report has something the envelope did not: a
 * new finding or a check it ruled out. In inventory it names the database the readiness check cannot reach.
 */

const WAIT = 60_000;
const USERS = { requester: 'UREQUESTER', engineer: 'UENGINEER' } as const;
const SPECIALIST: Readonly<Record<string, string>> = {
  'ml-team': 'storage',
  payments: 'compute',
  orders: 'compute',
  inventory: 'platform',
  wiki: 'compute',
};

const sandbox = useSandboxPage({ env: { CALMOPS_MIN_TIME_IN_STATE_SECONDS: '0' }, openAs: USERS.requester });

interface Shown {
  ts: string;
  bot: boolean;
  text: string;
}

async function replies(): Promise<Shown[]> {
  return sandbox.page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>('#thread-messages .thread-divider ~ .msg')).map((node) => ({
      ts: node.dataset['ts'] ?? '',
      bot: node.querySelector('.app-badge') !== null,
      text: Array.from(node.querySelector('.msg-body')?.children ?? [])
        .filter((part) => !part.matches('.msg-meta, .msg-only-you'))
        .map((part) => (part as HTMLElement).innerText)
        .join('\n')
        .replace(/\s+/g, ' ')
        .trim(),
    })),
  );
}

async function waitForReply(pattern: RegExp, seen: ReadonlySet<string> = new Set()): Promise<Shown> {
  let found: Shown | undefined;
  await expect
    .poll(
      async () => {
        found = (await replies()).filter((r) => r.bot && !seen.has(r.ts) && pattern.test(r.text)).at(-1);
        return found !== undefined;
      },
      { timeout: WAIT, message: `a thread reply matching ${pattern}` },
    )
    .toBe(true);
  return found as Shown;
}

function shown(ts: string): Locator {
  return sandbox.page.locator(`#thread .msg[data-ts="${ts}"]`);
}

async function say(text: string): Promise<Set<string>> {
  const before = new Set((await replies()).map((r) => r.ts));
  await sandbox.page.fill('#thread-input', text);
  await sandbox.page.press('#thread-input', 'Enter');
  return before;
}

async function openTriage(demo: DemoNamespace): Promise<Shown> {
  await sandbox.page.selectOption('#persona', USERS.requester);
  const roots = sandbox.page.locator('#messages .msg', { hasText: 'requested by' });
  const before = new Set(await roots.evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset['ts'])));
  await sandbox.page.fill('#composer-input', demo.try);
  await sandbox.page.press('#composer-input', 'Enter');
  let rootTs: string | undefined;
  await expect
    .poll(
      async () => {
        const all = await roots.evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset['ts']));
        rootTs = all.find((ts) => ts !== undefined && !before.has(ts));
        return rootTs !== undefined;
      },
      { timeout: WAIT },
    )
    .toBe(true);
  await openThread(sandbox.page, sandbox.page.locator(`#messages .msg[data-ts="${rootTs}"] .thread-link`), WAIT);
  const envelope = await waitForReply(new RegExp(`Triage: \\S+ in ${demo.namespace}\\b`));
  // The memory search follows the envelope; after it the session waits for the thread.
  await waitForReply(/similar incident|No similar incident|past incident/i);
  return envelope;
}

describe('a specialist handoff in every demo namespace', () => {
  it.each(DEMO_NAMESPACES.map((d) => [d.namespace, d] as const))('%s', async (namespace, demo) => {
    const envelope = await openTriage(demo);
    const proposedOnItsOwn = (await replies()).some((r) => r.bot && /Shall I consult/.test(r.text));
    if (namespace === 'wiki') expect(proposedOnItsOwn).toBe(false);

    const domain = SPECIALIST[namespace] as string;
    const asked = await say(`Ask the ${domain} specialist to review ${namespace}`);
    const proposal = await waitForReply(/Shall I consult/, asked);

    // The proposal waits; the thread does not. A read is answered, and asking again points at the buttons.
    const read = await say(`kubectl get pods -n ${namespace}`);
    await waitForReply(/kubectl get pods|NAME\s+READY|No resources found/, read);
    const again = await say(`Ask the ${domain} specialist to review ${namespace}`);
    await waitForReply(/already proposed above/, again);

    const seen = new Set((await replies()).map((r) => r.ts));
    await sandbox.page.selectOption('#persona', USERS.engineer);
    await shown(proposal.ts).getByRole('button', { name: 'Yes, consult' }).click();
    const report = await waitForReply(/Findings report/, seen);
    await sandbox.page.selectOption('#persona', USERS.requester);

    // Something the envelope did not have: a new finding, or a check the specialist ruled out.
    const lines = report.text.split(/(?=•)|(?=✅)|(?=:white_check_mark:)/).map((l) => l.trim());
    const news = lines.filter(
      (l) => /ruled out:|^•/.test(l) && !envelope.text.includes(l.replace(/^(?:•|✅|ruled out:)\s*/, '').slice(0, 60)),
    );
    expect(news.length, report.text).toBeGreaterThan(0);
    expect(report.text).toMatch(/What it checked/);
    if (namespace === 'inventory') {
      expect(report.text).toMatch(/cannot reach its database at 172\.30\.41\.17:5432/);
      expect(report.text).toMatch(/Ranking changed/);
    }
  });
});
