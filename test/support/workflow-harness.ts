import { readFileSync } from 'node:fs';
import { Logger } from '@aws-lambda-powertools/logger';
import { DescribeExecutionCommand, SendTaskSuccessCommand } from '@aws-sdk/client-sfn';
import { DEMO_IDS } from '../../local/slack/index.js';
import { DEMO_SCOPE, type LocalStack, type LocalStackOptions, startLocalStack } from '../../local/stack.js';
import { createWorkflowRuntime } from '../../src/app/workflow-runtime.js';
import { parseSnapshot, parseSnapshotLogs } from '../../src/cluster/snapshot.js';
import { deliverInput } from '../../src/workflow/deliver-input.js';
import type { WorkflowDeps, WorkflowMetrics } from '../../src/workflow/deps.js';
import { startSession } from '../../src/workflow/session-lifecycle.js';
import { renderMessage } from './slack-messages.js';
import { startedForSuite } from './suite-lifecycle.js';

/** Shared plumbing for the workflow integration tests: a local stack, the test-side deps, and a Slack-side stand-in. */

export function fixture(name: string) {
  const base = new URL(`../fixtures/snapshots/${name}`, import.meta.url);
  const objects = parseSnapshot(readFileSync(new URL(`${base.href}.yaml`), 'utf8'));
  let logs: ReturnType<typeof parseSnapshotLogs> | undefined;
  try {
    logs = parseSnapshotLogs(readFileSync(new URL(`${base.href}.logs.json`), 'utf8'));
  } catch {
    logs = undefined;
  }
  return { objects, ...(logs ? { logs } : {}) };
}

export interface Harness {
  stack: LocalStack;
  deps: WorkflowDeps;
  expired: string[];
  close(): Promise<void>;
}

export async function startHarness(options: Partial<LocalStackOptions> = {}): Promise<Harness> {
  const expired: string[] = [];
  const metrics: WorkflowMetrics = { approvalExpired: (kind) => expired.push(kind) };
  const stack = await startLocalStack({
    snapshot: fixture('pvc-binding--no-default-storageclass'),
    logLevel: 'SILENT',
    metrics,
    ...options,
  });
  const deps = await createWorkflowRuntime(stack.env, { logger: new Logger({ logLevel: 'SILENT' }), metrics });
  return { stack, deps, expired, close: () => stack.close() };
}

/** One harness for the enclosing `describe`, started before its tests and closed after them. */
export function useHarness(options: Partial<LocalStackOptions> = {}): Harness {
  return startedForSuite(() => startHarness(options));
}

/**
 * Polls `probe` until it finds something. The timeout only turns a hang into a message naming what never came: it is
 * sized for a shared machine running two suites at once, and a test asserts on what happened, never on how soon.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 120_000,
  intervalMs = 50,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Opens a thread the way the Slack side does (root message first) and starts the session. */
export async function openSession(
  h: Harness,
  text = 'pvc stuck pending',
  namespace = 'student03',
  intent = 'pvc-binding',
) {
  const root = h.stack.slack?.addUserMessage({
    channel: DEMO_IDS.incidents,
    user: DEMO_IDS.requester,
    text: `/triage ${text}`,
  });
  const threadTs = root?.ts ?? `${Date.now() / 1000}`;
  const started = await startSession(h.deps, {
    channelId: DEMO_IDS.incidents,
    threadTs,
    requester: DEMO_IDS.requester,
    text,
    intent,
    namespace,
    cluster: 'default',
    scope: DEMO_SCOPE,
  });
  return { ...started, threadTs };
}

/** The requester's message in the session's thread, as the Slack function hands it to the workflow. */
export function say(h: Harness, sessionId: string, text: string, messageKey: string) {
  return deliverInput(h.deps, { sessionId, userId: DEMO_IDS.requester, text, source: 'message', messageKey });
}

/** The requester's click on a hypothesis button. */
export function chooseHypothesis(
  h: Harness,
  sessionId: string,
  hypothesisId: string,
  text: string,
  messageKey: string,
) {
  return deliverInput(h.deps, {
    sessionId,
    userId: DEMO_IDS.requester,
    text,
    source: 'button',
    action: { type: 'hypothesis', hypothesisId },
    messageKey,
  });
}

/** The requester's click on "resolved": someone ran the fix, and the session is to validate it. */
export function clickResolved(h: Harness, sessionId: string, messageKey: string) {
  return deliverInput(h.deps, {
    sessionId,
    userId: DEMO_IDS.requester,
    text: 'resolved',
    source: 'button',
    action: { type: 'resolved' },
    messageKey,
  });
}

/** Tests the top hypothesis, confirms it, and waits until the plan it leads to is posted for review. */
export async function toPlanReview(h: Harness, sessionId: string, threadTs: string) {
  await waitForInputWait(h, sessionId);
  const hypothesis = (await h.deps.artifacts.getWorkflow(sessionId))?.hypotheses[0];
  await chooseHypothesis(h, sessionId, hypothesis?.id ?? '', 'test it', `${sessionId}-h`);
  await waitForThread(h, threadTs, /Does this confirm/);
  await say(h, sessionId, 'confirmed', `${sessionId}-c`);
  await waitForThread(h, threadTs, /Remediation plan for review/);
}

export function threadTexts(h: Harness, threadTs: string): string[] {
  return (h.stack.slack?.messages(DEMO_IDS.incidents) ?? []).filter((m) => m.thread_ts === threadTs).map(renderMessage);
}

export async function waitForThread(
  h: Harness,
  threadTs: string,
  pattern: RegExp,
  timeoutMs = 120_000,
): Promise<string> {
  return waitFor(
    `a thread message matching ${pattern}`,
    async () => threadTexts(h, threadTs).find((t) => pattern.test(t)),
    timeoutMs,
  );
}

/** Waits until the session's execution parks on its input wait (its wait item is stored and unclaimed). */
export async function waitForInputWait(h: Harness, sessionId: string, timeoutMs = 120_000) {
  return waitFor(
    'the input wait',
    async () => {
      const wait = await h.deps.store.waits.get(sessionId);
      return wait && !wait.claimedAt ? wait : undefined;
    },
    timeoutMs,
  );
}

/** Decides the latest approval of `kind` as the Slack side does: one conditional decision, then SendTaskSuccess. */
export async function decide(
  h: Harness,
  sessionId: string,
  kind: string,
  decision: 'approve' | 'deny' | 'request-changes',
  userId: string,
  note?: string,
  approvalId?: string,
) {
  // The session's pending artifact may still name an approval just decided (a revision is posted before its own
  // approval is recorded): only one the store still holds as pending is decided.
  const pending = await waitFor(`a pending ${kind} approval`, async () => {
    const p = await h.deps.artifacts.getPending(sessionId, kind);
    if (!p || (approvalId !== undefined && p.approvalId !== approvalId)) return undefined;
    return (await h.deps.store.approvals.get(p.approvalId))?.status === 'pending' ? p : undefined;
  });
  const decided = await h.deps.store.approvals.decide(
    pending.approvalId,
    decision === 'approve' ? 'approved' : 'rejected',
    userId,
    new Date(),
    note ? { reason: note } : {},
  );
  if (decided.token === undefined && decided.data?.['delivery'] === 'inbox') {
    // A specialist proposal: nobody waits on a token, the decision reaches the session as its button's input.
    await deliverInput(h.deps, {
      sessionId,
      userId,
      text: decision === 'approve' ? 'yes, consult the specialist' : 'no, thanks',
      source: 'button',
      action: { type: 'handoff', approvalId: decided.id, decision: decision === 'approve' ? 'approve' : 'deny' },
      messageKey: `approval:${decided.id}`,
    });
    return decided;
  }
  await h.stack.sfnClient.send(
    new SendTaskSuccessCommand({
      taskToken: decided.token ?? '',
      output: JSON.stringify({ decision, userId, ...(note ? { note } : {}), decidedAt: new Date().toISOString() }),
    }),
  );
  return decided;
}

/** Asks for changes to the plan under review, then waits until the revised plan is itself pending review. */
export async function requestPlanChanges(h: Harness, sessionId: string, userId: string, note: string, what: string) {
  const reviewed = await decide(h, sessionId, 'plan-review', 'request-changes', userId, note);
  return waitFor(what, async () => {
    const p = await h.deps.artifacts.getPending(sessionId, 'plan-review');
    return p && p.approvalId !== reviewed.id ? p : undefined;
  });
}

export async function executionStatus(h: Harness, executionArn: string) {
  return (await h.stack.sfnClient.send(new DescribeExecutionCommand({ executionArn }))).status;
}

export { DEMO_IDS };
