import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_NAMESPACES, type DemoNamespace } from '../../local/demo/index.js';
import { type RunningCalmops, startCalmops } from '../../local/start.js';
import { TimelineRepository } from '../../src/store/timeline.js';

/**
 * The guided diagnosis of every broken demo namespace, in a real browser on the sandbox page: /triage, every prompt
 * the envelope suggests typed verbatim, a hypothesis tested, the root cause confirmed, the plan sent back by a senior
 * with a change and approved, and the approved plan's changes typed one after the other. The session must walk
 * GATHERING → ANALYZING → HYPOTHESIZING → TESTING → RESOLVING without skipping a state or going back, reach
 * RESOLVING only on the approval, and never read the plan's own steps as panic.
 */

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts');
const WAIT = 60_000;
const USERS = { requester: 'UREQUESTER', senior: 'USENIOR' } as const;
const STATES = ['GATHERING', 'ANALYZING', 'HYPOTHESIZING', 'TESTING', 'RESOLVING'] as const;
const PANIC = /Hold on|moving (?:too )?quickly|Jumping between|word of caution/i;
/** Replies that leave the person where they were: a refusal with nothing in it, "Name one", a failure. */
const NON_ANSWER = /Name one, e\.g\.|^\s*(?:🚫\s*)?Not yet:|did not go through|could not finish|^\s*$/;

const BROKEN = DEMO_NAMESPACES.filter((d) => d.expectedRootCause !== undefined);

let running: RunningCalmops;
let browser: Browser;
let page: Page;
let dataDir: string;
let timeline: TimelineRepository;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  dataDir = await mkdtemp(join(tmpdir(), 'calmops-guided-'));
  // The test types faster than a person reads: no minimum time in GATHERING (docs/diagnosis.md).
  running = await startCalmops({
    env: { CALMOPS_MIN_TIME_IN_STATE_SECONDS: '0' },
    dataDir,
    port: 0,
    logLevel: 'SILENT',
    ackTimeoutMs: 30_000,
  });
  timeline = new TimelineRepository({ client: running.stack.docClient, tableName: 'calmops' });
  browser = await chromium.launch({
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
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  page = await context.newPage();
  await page.goto(`${running.sandboxUrl}?user=${USERS.requester}&channel=incidents`);
  await page.waitForSelector('body[data-ready="true"]');
  await mkdir(ARTIFACTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await running?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------------------------
// The page

async function actAs(user: string): Promise<void> {
  await page.selectOption('#persona', user);
}

function thread(): Locator {
  return page.locator('#thread');
}

interface Shown {
  ts: string;
  bot: boolean;
  text: string;
}

/** The open thread's replies as the page shows them, oldest first. */
async function replies(): Promise<Shown[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>('#thread-messages .thread-divider ~ .msg')).map((node) => ({
      ts: node.dataset['ts'] ?? '',
      bot: node.querySelector('.app-badge') !== null,
      text: (node.querySelector('.msg-body')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
    })),
  );
}

/** A reply of the open thread, by its ts: the bot rewrites decided approvals in place. */
function shown(ts: string): Locator {
  return thread().locator(`.msg[data-ts="${ts}"]`);
}

/** The newest bot reply matching `pattern` that is not in `seen`. */
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

/** The page has drawn everything the Slack stand-in recorded. */
async function pageCaughtUp(): Promise<void> {
  await expect
    .poll(
      async () => {
        const state = (await (await fetch(`${running.origin}/sandbox/api/state`)).json()) as { version: string };
        return (await page.evaluate(() => document.body.dataset['version'])) === state.version;
      },
      { timeout: WAIT },
    )
    .toBe(true);
}

// ---------------------------------------------------------------------------------------------------------------
// The session, as the store keeps it

async function sessionItem(sessionId: string): Promise<Record<string, unknown>> {
  const got = await running.stack.docClient.send(
    new GetCommand({ TableName: 'calmops', Key: { PK: `SESSION#${sessionId}`, SK: 'META' } }),
  );
  return got.Item ?? {};
}

async function stateOf(sessionId: string): Promise<string> {
  return String((await sessionItem(sessionId))['state']);
}

/** The input wait the execution is parked on, when it waits for the thread. */
async function inputWait(sessionId: string): Promise<{ waitId: string; claimed: boolean } | undefined> {
  const got = await running.stack.docClient.send(
    new GetCommand({ TableName: 'calmops', Key: { PK: `SESSION#${sessionId}`, SK: 'WAIT' } }),
  );
  if (got.Item === undefined) return undefined;
  return { waitId: String(got.Item['waitId']), claimed: got.Item['claimedAt'] !== undefined };
}

async function stateChanges(sessionId: string): Promise<{ hop: string; at: string; seq: number; reason: string }[]> {
  return (await timeline.list(sessionId))
    .filter((e) => e.type === 'state.changed')
    .map((e) => ({ hop: `${e.data?.['from']}>${e.data?.['to']}`, at: e.at, seq: e.seq, reason: e.summary ?? '' }));
}

/** A proposal calmops made on its own or was asked for: the requester declines it, so the journey goes on. */
async function declineHandoffs(): Promise<void> {
  const proposals = thread()
    .locator('.msg', { hasText: /Shall I consult/ })
    .filter({ has: page.getByRole('button', { name: 'No, thanks' }) });
  for (const proposal of await proposals.all()) {
    await proposal.getByRole('button', { name: 'No, thanks' }).click();
  }
}

/** Waits until the execution took the last input, answered it and waits for the thread again. */
async function settled(sessionId: string, previousWait?: string): Promise<void> {
  await expect
    .poll(
      async () => {
        await declineHandoffs();
        const wait = await inputWait(sessionId);
        return wait !== undefined && !wait.claimed && wait.waitId !== previousWait;
      },
      { timeout: WAIT, message: 'the session to wait for the thread again' },
    )
    .toBe(true);
  await pageCaughtUp();
}

// ---------------------------------------------------------------------------------------------------------------
// The journey

interface Journey {
  demo: DemoNamespace;
  sessionId: string;
  /** States seen after every input, in order. */
  seen: string[];
}

/** Types in the thread and returns the bot's replies to it once the session waits again. */
async function say(journey: Journey, text: string): Promise<Shown[]> {
  const before = new Set((await replies()).map((r) => r.ts));
  const wait = await inputWait(journey.sessionId);
  await page.fill('#thread-input', text);
  await page.press('#thread-input', 'Enter');
  await expect
    .poll(async () => (await replies()).some((r) => !r.bot && !before.has(r.ts)), {
      timeout: WAIT,
    })
    .toBe(true);
  await settled(journey.sessionId, wait?.waitId);
  await observe(journey);
  return (await replies()).filter((r) => r.bot && !before.has(r.ts));
}

async function observe(journey: Journey): Promise<string> {
  const state = await stateOf(journey.sessionId);
  journey.seen.push(state);
  return state;
}

const rank = (state: string) => STATES.indexOf(state as (typeof STATES)[number]);

interface ShownStep {
  number: number;
  mode: string;
  command: string;
}

/** The steps of a plan message as the page shows them: "N. description" in bold, the mode in italics, the command. */
async function stepsOf(message: Locator): Promise<ShownStep[]> {
  return message.evaluate((node) =>
    Array.from(node.querySelectorAll<HTMLElement>('.blk-section'))
      .filter((s) => s.querySelector('pre') !== null)
      .map((s) => ({
        number: Number(/^(\d+)\./.exec(s.querySelector('b')?.textContent ?? '')?.[1] ?? Number.NaN),
        mode: (s.querySelector('i')?.textContent ?? '').split(',')[0]?.trim() ?? '',
        command: (s.querySelector('pre')?.textContent ?? '').trim(),
      })),
  );
}

/** The prompts the envelope offers ("Try asking: “…” · “…”"), as the page shows them. */
function suggestionsOf(envelopeText: string): string[] {
  const line = /Try asking:(.*?)(?:Session |$)/.exec(envelopeText)?.[1] ?? '';
  return [...line.matchAll(/“([^”]+)”/g)].map((m) => m[1] as string);
}

async function openTriage(demo: DemoNamespace): Promise<Journey> {
  await actAs(USERS.requester);
  const roots = page.locator('#messages .msg', { hasText: 'requested by' });
  const before = new Set(await roots.evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset['ts'])));
  await page.fill('#composer-input', demo.try);
  await page.press('#composer-input', 'Enter');
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
  await page.locator(`#messages .msg[data-ts="${rootTs}"] .thread-link`).click({ timeout: WAIT });
  const envelope = await waitForReply(new RegExp(`Triage: \\S+ in ${demo.namespace}\\b`));
  const sessionId = /Session (\w{26})/.exec(envelope.text)?.[1];
  expect(sessionId, envelope.text).toBeDefined();
  return { demo, sessionId: sessionId as string, seen: [] };
}

describe('guided journeys through the broken demo namespaces in a browser', () => {
  it('offers exactly the broken namespaces in the demo panel', async () => {
    const rows = page.locator('#sidebar-demo [data-demo-namespace]');
    await expect.poll(() => rows.count(), { timeout: WAIT }).toBe(DEMO_NAMESPACES.length);
    const broken = await rows.evaluateAll((nodes) =>
      nodes
        .filter((n) => n.querySelector('.demo-status')?.textContent === 'broken')
        .map((n) => (n as HTMLElement).dataset['demoNamespace']),
    );
    expect(broken.sort()).toEqual(BROKEN.map((d) => d.namespace).sort());
  });

  for (const demo of BROKEN) {
    it(`walks ${demo.namespace} from /triage to the approved plan's changes`, { timeout: 360_000 }, async () => {
      const journey = await openTriage(demo);
      const { sessionId } = journey;
      await settled(sessionId);
      const envelope = await waitForReply(new RegExp(`Triage: \\S+ in ${demo.namespace}\\b`));
      const envelopeState = /State (GATHERING|ANALYZING|HYPOTHESIZING|TESTING|RESOLVING)/.exec(envelope.text)?.[1];
      expect(envelopeState, envelope.text).toBeDefined();
      journey.seen.push(envelopeState as string);
      await observe(journey);

      // Every prompt the envelope suggests, typed verbatim, gets an answer; a handoff waits for its answer, so last.
      const suggestions = suggestionsOf(envelope.text);
      expect(suggestions.length, envelope.text).toBeGreaterThan(0);
      const ordered = [
        ...suggestions.filter((s) => !/specialist/i.test(s)),
        ...suggestions.filter((s) => /specialist/i.test(s)),
      ];
      const unanswered: string[] = [];
      for (const suggestion of ordered) {
        const answer = await say(journey, suggestion);
        const substantive = answer.filter((r) => !NON_ANSWER.test(r.text));
        if (substantive.length === 0) {
          unanswered.push(`${suggestion} → ${answer.map((r) => r.text).join(' | ') || '(no reply)'}`);
        }
        for (const r of answer) expect(r.text, `the answer to "${suggestion}"`).not.toMatch(PANIC);
      }
      expect(unanswered).toEqual([]);

      // The top hypothesis is the fault the namespace has; testing it walks on to TESTING.
      const test = thread().getByRole('button', { name: /^Test #1 / }).first();
      expect(await test.textContent()).toContain(demo.expectedRootCause);
      const beforeTest = await inputWait(sessionId);
      const seenBeforeTest = new Set((await replies()).map((r) => r.ts));
      await test.click();
      await waitForReply(/Does this confirm/, seenBeforeTest);
      await settled(sessionId, beforeTest?.waitId);
      expect(await observe(journey)).toBe('TESTING');

      // "confirmed" asks for the plan; it stays in TESTING while the plan is under review.
      const seenBeforePlan = new Set((await replies()).map((r) => r.ts));
      await page.fill('#thread-input', 'confirmed');
      await page.press('#thread-input', 'Enter');
      const first = await waitForReply(/Remediation plan for review/, seenBeforePlan);
      const firstPlan = shown(first.ts);
      await firstPlan.getByRole('button', { name: 'Request changes' }).waitFor({ timeout: WAIT });
      expect(await observe(journey)).toBe('TESTING');
      const firstSteps = await stepsOf(firstPlan);
      expect(firstSteps.length, first.text).toBeGreaterThan(1);
      expect(firstSteps.map((s) => s.number)).toEqual(firstSteps.map((_, i) => i + 1));

      // The senior sends it back: drop the last step.
      const dropped = firstSteps.at(-1) as ShownStep;
      const note = `Drop step ${dropped.number}.`;
      await actAs(USERS.senior);
      await firstPlan.getByRole('button', { name: 'Request changes' }).click();
      const modal = page.locator('#modal');
      await modal.waitFor({ state: 'visible', timeout: WAIT });
      await expect.poll(() => page.locator('#modal-title').textContent()).toBe('Request changes');
      await modal.locator('textarea[data-block-id="note"]').fill(note);
      await page.click('#modal-submit');
      await modal.waitFor({ state: 'hidden', timeout: WAIT });
      const revised = await waitForReply(/Remediation plan for review \(revision 1\)/, seenBeforePlan);
      const revisedPlan = shown(revised.ts);
      await revisedPlan.getByRole('button', { name: 'Approve plan' }).waitFor({ timeout: WAIT });
      expect(revised.text).toContain(`dropped step ${dropped.number}`);
      const revisedSteps = await stepsOf(revisedPlan);
      expect(revisedSteps.map((s) => s.command)).toEqual(firstSteps.slice(0, -1).map((s) => s.command));
      expect(await observe(journey)).toBe('TESTING');

      // Approved by the senior: only now RESOLVING.
      const approvedAt = new Date().toISOString();
      expect(await stateOf(sessionId)).toBe('TESTING');
      const seenBeforeApproval = new Set((await replies()).map((r) => r.ts));
      await revisedPlan.getByRole('button', { name: 'Approve plan' }).click();
      const approved = await waitForReply(/Approved remediation plan/, seenBeforeApproval);
      await expect.poll(() => stateOf(sessionId), { timeout: WAIT }).toBe('RESOLVING');
      await settled(sessionId);
      expect(await observe(journey)).toBe('RESOLVING');
      const approvedSteps = await stepsOf(shown(approved.ts));
      expect(approvedSteps.map((s) => s.command)).toEqual(revisedSteps.map((s) => s.command));

      // The requester types the approved plan's changes, in order: each is answered from the plan, calmly.
      await actAs(USERS.requester);
      const writes = approvedSteps.filter((s) => s.mode === 'write');
      expect(writes.length, approved.text).toBeGreaterThan(0);
      for (const step of writes) {
        const answer = await say(journey, step.command);
        expect(answer.length, `an answer to "${step.command}"`).toBeGreaterThan(0);
        for (const r of answer) expect(r.text, `the answer to "${step.command}"`).not.toMatch(PANIC);
        expect(answer.map((r) => r.text).join('\n')).toContain(step.command);
        expect(journey.seen.at(-1)).toBe('RESOLVING');
      }

      // Never back, never skipped: the states seen only move forward, and the timeline has every hop in order.
      for (let i = 1; i < journey.seen.length; i++) {
        expect(rank(journey.seen[i] as string), journey.seen.join(' → ')).toBeGreaterThanOrEqual(
          rank(journey.seen[i - 1] as string),
        );
      }
      const events = await timeline.list(sessionId);
      const hops = events.filter((e) => e.type === 'state.changed');
      expect(hops.map((e) => `${e.data?.['from']}>${e.data?.['to']}`)).toEqual(
        STATES.slice(1).map((to, i) => `${STATES[i]}>${to}`),
      );
      const approval = events.findIndex(
        (e) => e.type === 'approval.decided' && e.data?.['kind'] === 'plan-review' && e.data?.['decision'] === 'approve',
      );
      const resolving = events.findIndex((e) => e.type === 'state.changed' && e.data?.['to'] === 'RESOLVING');
      expect(approval).toBeGreaterThanOrEqual(0);
      expect(resolving).toBeGreaterThan(approval);
      expect((events[resolving]?.at ?? '') >= approvedAt).toBe(true);
      expect(events.filter((e) => e.type.startsWith('panic'))).toEqual([]);

      await page.screenshot({ path: join(ARTIFACTS, `sandbox-guided-${demo.namespace}.png`) });
    });
  }
});
