import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Locator } from 'playwright-core';
import { beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { DEMO_NAMESPACES, type DemoNamespace } from '../../local/demo/index.js';
import { type TimelineEvent, TimelineRepository } from '../../src/store/timeline.js';
import { openThread, useSandboxPage } from '../support/sandbox-page.js';

/**
 * The guided diagnosis of every broken demo namespace, in a real browser on the sandbox page: /triage, every prompt
 * the envelope suggests typed verbatim, a hypothesis tested, the root cause confirmed, the plan sent back by a senior
 * with a change and approved, and the approved plan's changes typed one after the other. The session must walk
 * GATHERING → ANALYZING → HYPOTHESIZING → TESTING → RESOLVING without skipping a state or going back, reach
 * RESOLVING only on the approval, and never read the plan's own steps as panic.
 */

const ARTIFACTS = join(import.meta.dirname, '..', 'artifacts');
const WAIT = 60_000;
const USERS = { requester: 'UREQUESTER', senior: 'USENIOR' } as const;
const STATES = ['GATHERING', 'ANALYZING', 'HYPOTHESIZING', 'TESTING', 'RESOLVING'] as const;
const PANIC = /Hold on|moving (?:too )?quickly|Jumping between|word of caution/i;
/** Replies that leave the person where they were: a refusal, a failure, nothing. */
const NON_ANSWER = /^(?:🚫\s*)?Not yet:|did not go through|could not finish|^\s*$/;
/** A reply that hands the question back ("Name one, e.g. …", "name one for its logs") answers nothing. */
const BOUNCED = /\bname one\b/i;

const BROKEN = DEMO_NAMESPACES.filter((d) => d.expectedRootCause !== undefined);

// The test types faster than a person reads: no minimum time in GATHERING (docs/diagnosis.md).
const sandbox = useSandboxPage({ env: { CALMOPS_MIN_TIME_IN_STATE_SECONDS: '0' }, openAs: USERS.requester });
let timeline: TimelineRepository;

beforeAll(async () => {
  timeline = new TimelineRepository({ client: sandbox.running.stack.docClient, tableName: 'calmops' });
  await mkdir(ARTIFACTS, { recursive: true });
});

// ---------------------------------------------------------------------------------------------------------------
// The page

async function actAs(user: string): Promise<void> {
  await sandbox.page.selectOption('#persona', user);
}

function thread(): Locator {
  return sandbox.page.locator('#thread');
}

interface Shown {
  ts: string;
  bot: boolean;
  text: string;
}

/** The open thread's replies as the page shows them, oldest first. */
async function replies(): Promise<Shown[]> {
  return sandbox.page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>('#thread-messages .thread-divider ~ .msg')).map((node) => ({
      ts: node.dataset['ts'] ?? '',
      bot: node.querySelector('.app-badge') !== null,
      // The message as read, without its author and time; innerText keeps the breaks between blocks.
      text: Array.from(node.querySelector('.msg-body')?.children ?? [])
        .filter((part) => !part.matches('.msg-meta, .msg-only-you'))
        .map((part) => (part as HTMLElement).innerText)
        .join('\n')
        .replace(/\s+/g, ' ')
        .trim(),
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
        const state = (await (await fetch(`${sandbox.running.origin}/sandbox/api/state`)).json()) as {
          version: string;
        };
        return (await sandbox.page.evaluate(() => document.body.dataset['version'])) === state.version;
      },
      { timeout: WAIT },
    )
    .toBe(true);
}

// ---------------------------------------------------------------------------------------------------------------
// The session, as the store keeps it

async function sessionItem(sessionId: string): Promise<Record<string, unknown>> {
  const got = await sandbox.running.stack.docClient.send(
    new GetCommand({ TableName: 'calmops', Key: { PK: `SESSION#${sessionId}`, SK: 'META' } }),
  );
  return got.Item ?? {};
}

async function stateOf(sessionId: string): Promise<string> {
  return String((await sessionItem(sessionId))['state']);
}

/** The input wait the execution is parked on, when it waits for the thread. */
async function inputWait(sessionId: string): Promise<{ waitId: string; claimed: boolean } | undefined> {
  const got = await sandbox.running.stack.docClient.send(
    new GetCommand({ TableName: 'calmops', Key: { PK: `SESSION#${sessionId}`, SK: 'WAIT' } }),
  );
  if (got.Item === undefined) return undefined;
  return { waitId: String(got.Item['waitId']), claimed: got.Item['claimedAt'] !== undefined };
}

/** Every recorded hop between states, as `FROM>TO` with its reason. */
async function stateChanges(sessionId: string): Promise<{ hop: string; reason: string }[]> {
  return (await timeline.list(sessionId))
    .filter((e) => e.type === 'state.changed')
    .map((e) => ({ hop: `${e.data?.['from']}>${e.data?.['to']}`, reason: e.summary ?? '' }));
}

/** A proposal calmops made on its own or was asked for: the requester declines it, so the journey goes on. */
async function declineHandoffs(): Promise<void> {
  const proposals = thread()
    .locator('.msg', { hasText: /Shall I consult/ })
    .filter({ has: sandbox.page.getByRole('button', { name: 'No, thanks' }) });
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
  await sandbox.page.fill('#thread-input', text);
  await sandbox.page.press('#thread-input', 'Enter');
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
  const sessionId = /Session (\w{26})/.exec(envelope.text)?.[1];
  expect(sessionId, envelope.text).toBeDefined();
  return { demo, sessionId: sessionId as string, seen: [] };
}

/**
 * Namespaces whose fix is outside the cluster (docs/local.md: inventory's database comes back), so the plan only
 * reads: the review machine approves such a plan on its own (docs/workflow.md, autonomous mode) and nobody reviews it.
 */
const READ_ONLY_PLAN: ReadonlySet<string> = new Set(['inventory']);

interface ApprovedPlan {
  steps: ShownStep[];
  /** When the approval was asked for (the click, or "confirmed" for a plan approved on its own). */
  askedAt: string;
  /** The timeline entry that approved it. */
  isApproval: (e: TimelineEvent) => boolean;
}

async function askForPlan(journey: Journey): Promise<{ seen: Set<string>; at: string }> {
  expect(await observe(journey)).toBe('TESTING');
  const seen = new Set((await replies()).map((r) => r.ts));
  const at = new Date().toISOString();
  await sandbox.page.fill('#thread-input', 'confirmed');
  await sandbox.page.press('#thread-input', 'Enter');
  return { seen, at };
}

/** The plan goes to review; a senior sends it back with a note dropping a step, then approves the revision. */
async function reviewedBySenior(journey: Journey): Promise<ApprovedPlan> {
  const { sessionId } = journey;
  const asked = await askForPlan(journey);
  const first = await waitForReply(/Remediation plan for review/, asked.seen);
  const firstPlan = shown(first.ts);
  await firstPlan.getByRole('button', { name: 'Request changes' }).waitFor({ timeout: WAIT });
  expect(await observe(journey)).toBe('TESTING');
  const firstSteps = await stepsOf(firstPlan);
  expect(firstSteps.length, first.text).toBeGreaterThan(1);
  expect(firstSteps.map((s) => s.number)).toEqual(firstSteps.map((_, i) => i + 1));
  expect(
    firstSteps.some((s) => s.mode === 'write'),
    first.text,
  ).toBe(true);

  // The plan ends with a read that shows the fix took; the senior checks that themselves.
  const dropped = firstSteps.at(-1) as ShownStep;
  await actAs(USERS.senior);
  await firstPlan.getByRole('button', { name: 'Request changes' }).click();
  const modal = sandbox.page.locator('#modal');
  await modal.waitFor({ state: 'visible', timeout: WAIT });
  await expect.poll(() => sandbox.page.locator('#modal-title').textContent()).toBe('Request changes');
  await modal.locator('textarea[data-block-id="note"]').fill(`Drop step ${dropped.number}.`);
  await sandbox.page.click('#modal-submit');
  await modal.waitFor({ state: 'hidden', timeout: WAIT });
  const revised = await waitForReply(/Remediation plan for review \(revision 1\)/, asked.seen);
  const revisedPlan = shown(revised.ts);
  await revisedPlan.getByRole('button', { name: 'Approve plan' }).waitFor({ timeout: WAIT });
  expect(revised.text).toContain(`dropped step ${dropped.number} (${dropped.command})`);
  const revisedSteps = await stepsOf(revisedPlan);
  expect(revisedSteps.map((s) => s.command)).toEqual(firstSteps.slice(0, -1).map((s) => s.command));
  expect(await observe(journey)).toBe('TESTING');

  // Approved by the senior: only now RESOLVING.
  expect(await stateOf(sessionId)).toBe('TESTING');
  const seen = new Set((await replies()).map((r) => r.ts));
  const askedAt = new Date().toISOString();
  await revisedPlan.getByRole('button', { name: 'Approve plan' }).click();
  const approved = await waitForReply(/Approved remediation plan/, seen);
  expect(approved.text).toMatch(/approved by @sam/);
  const steps = await stepsOf(shown(approved.ts));
  expect(steps.map((s) => s.command)).toEqual(revisedSteps.map((s) => s.command));
  return {
    steps,
    askedAt,
    isApproval: (e) =>
      e.type === 'approval.decided' &&
      e.actor === USERS.senior &&
      e.data?.['kind'] === 'plan-review' &&
      e.data?.['decision'] === 'approve',
  };
}

/** A plan that only reads is approved by the review machine itself: no review, no buttons to send it back with. */
async function approvedWithoutReview(journey: Journey): Promise<ApprovedPlan> {
  const asked = await askForPlan(journey);
  const approved = await waitForReply(/Approved remediation plan/, asked.seen);
  expect(approved.text).toContain('approved automatically: every step only reads');
  expect((await replies()).filter((r) => !asked.seen.has(r.ts) && /plan for review/.test(r.text))).toEqual([]);
  const steps = await stepsOf(shown(approved.ts));
  expect(steps.length, approved.text).toBeGreaterThan(0);
  expect(steps.filter((s) => s.mode !== 'read')).toEqual([]);
  return { steps, askedAt: asked.at, isApproval: (e) => e.type === 'review_autonomous_approved' };
}

describe('guided journeys through the broken demo namespaces in a browser', () => {
  it('offers exactly the broken namespaces in the demo panel', async () => {
    const rows = sandbox.page.locator('#sidebar-demo [data-demo-namespace]');
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
      // A failed step is read in the thread: print it as the page shows it.
      onTestFailed(async () => {
        const text = (await replies()).map((r) => `${r.bot ? 'calmops' : 'person'}: ${r.text}`).join('\n');
        console.error(`The ${demo.namespace} thread:\n${text}`);
      });
      const journey = await openTriage(demo);
      const { sessionId } = journey;
      await settled(sessionId);
      const envelope = await waitForReply(new RegExp(`Triage: \\S+ in ${demo.namespace}\\b`));
      // The envelope carries no state line (it would go stale); the state it left the session in is the store's.
      expect(envelope.text).not.toMatch(/State (GATHERING|ANALYZING|HYPOTHESIZING|TESTING|RESOLVING)/);
      journey.seen.push(await stateOf(sessionId));
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
        if (substantive.length === 0 || answer.some((r) => BOUNCED.test(r.text))) {
          unanswered.push(`${suggestion} → ${answer.map((r) => r.text).join(' | ') || '(no reply)'}`);
        }
        for (const r of answer) expect(r.text, `the answer to "${suggestion}"`).not.toMatch(PANIC);
      }
      expect(unanswered).toEqual([]);

      // The top hypothesis is the fault the namespace has; testing it walks on to TESTING.
      const test = thread()
        .getByRole('button', { name: /^Test #1 / })
        .first();
      expect(await test.textContent()).toContain(demo.expectedRootCause);
      const beforeTest = await inputWait(sessionId);
      const seenBeforeTest = new Set((await replies()).map((r) => r.ts));
      await test.click();
      const confirm = await waitForReply(/Does this confirm/, seenBeforeTest);
      expect(confirm.text).toMatch(/State TESTING$/);
      await settled(sessionId, beforeTest?.waitId);
      expect(await observe(journey)).toBe('TESTING');

      // "confirmed" asks for the plan; the session stays in TESTING until the plan is approved.
      const approved = READ_ONLY_PLAN.has(demo.namespace)
        ? await approvedWithoutReview(journey)
        : await reviewedBySenior(journey);
      await expect.poll(() => stateOf(sessionId), { timeout: WAIT }).toBe('RESOLVING');
      await settled(sessionId);
      expect(await observe(journey)).toBe('RESOLVING');

      // The requester works through the approved plan in its order: a change comes after the steps it needs (the
      // plan's reads among them), and each change is answered from the plan, calmly, in RESOLVING.
      await actAs(USERS.requester);
      const writes = approved.steps.filter((s) => s.mode === 'write');
      for (const step of approved.steps) {
        const answer = await say(journey, step.command);
        const said = answer.map((r) => r.text).join('\n');
        expect(answer.filter((r) => !NON_ANSWER.test(r.text)).length, `an answer to "${step.command}"`).toBeGreaterThan(
          0,
        );
        expect(said, `the answer to "${step.command}"`).not.toMatch(BOUNCED);
        expect(said, `the answer to "${step.command}"`).not.toMatch(PANIC);
        if (step.mode === 'write') {
          expect(said).toContain('From the approved plan');
          expect(said).toContain(`step ${step.number}:`);
          expect(said).toContain(step.command);
        }
        expect(journey.seen.at(-1)).toBe('RESOLVING');
      }
      const answered = (await timeline.list(sessionId)).filter((e) => e.type === 'change.answered');
      expect(answered.map((e) => [e.data?.['matched'], e.data?.['inOrder']])).toEqual(writes.map(() => [true, true]));

      // Never back, never skipped: the states seen only move forward, and the timeline has every hop in order.
      for (let i = 1; i < journey.seen.length; i++) {
        expect(rank(journey.seen[i] as string), journey.seen.join(' → ')).toBeGreaterThanOrEqual(
          rank(journey.seen[i - 1] as string),
        );
      }
      const events = await timeline.list(sessionId);
      const hops = await stateChanges(sessionId);
      expect(hops.map((h) => h.hop)).toEqual(STATES.slice(1).map((to, i) => `${STATES[i]}>${to}`));
      for (const h of hops) expect(h.reason, h.hop).toMatch(/\S/);
      // RESOLVING came with the approval, never before it.
      const approval = events.findIndex(approved.isApproval);
      const resolving = events.findIndex((e) => e.type === 'state.changed' && e.data?.['to'] === 'RESOLVING');
      expect(approval).toBeGreaterThanOrEqual(0);
      expect(resolving).toBeGreaterThan(approval);
      expect((events[resolving] as TimelineEvent).at >= approved.askedAt).toBe(true);
      expect(events.filter((e) => e.type.startsWith('panic'))).toEqual([]);

      await sandbox.page.screenshot({ path: join(ARTIFACTS, `sandbox-guided-${demo.namespace}.png`) });
    });
  }
});
