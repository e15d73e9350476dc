import { DEMO_IDS, demoChannels, type SlackStandIn, startSlackStandIn } from '../../local/slack/index.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { createStore, type Store } from '../../src/store/index.js';
import { renderMessage } from './slack-messages.js';
import { startedForSuite } from './suite-lifecycle.js';
import { fixture, waitFor } from './workflow-harness.js';

/** The channel the alerts policy routes `orders` alerts to, beside the demo's incident channel. */
export const ONCALL = 'CORDERSONCALL';
/** A crash-looping pod of the `orders` fixture the alert tests name. */
export const ORDERS_POD = 'order-worker-69b7c4d8f5-fk2lp';

export type AlertOutcome = {
  outcome: string;
  sessionId?: string;
  channelId?: string;
  threadTs?: string;
  intent?: string;
};

export interface AlertsStack {
  slack: SlackStandIn;
  stack: LocalStack;
  store: Store;
  close(): Promise<void>;
}

/**
 * The whole local stack for the alert tests: a Slack stand-in with the on-call channel, the crash-looping `orders`
 * namespace as the cluster, and a policy that sends alerts to the incident channel, and `orders` ones to on-call.
 */
async function startAlertsStack(alertsToken?: string, options: { policy?: unknown } = {}): Promise<AlertsStack> {
  const slack = await startSlackStandIn({
    channels: [...demoChannels(), { id: ONCALL, name: 'orders-oncall', is_member: true }],
  });
  const stack = await startLocalStack({
    snapshot: fixture('crashloop-analysis--missing-env'),
    slackApiUrl: slack.url,
    logLevel: 'SILENT',
    ...(alertsToken === undefined ? {} : { alertsToken }),
    policy: options.policy ?? {
      defaults: { cluster: 'default', approverGroup: DEMO_IDS.approvers, seniorGroup: DEMO_IDS.seniors },
      alerts: { channel: DEMO_IDS.incidents, routes: [{ namespace: 'orders', channel: ONCALL }] },
    },
  });
  const store = createStore({ client: stack.docClient, tableName: stack.env['CALMOPS_TABLE'] ?? 'calmops' });
  return {
    slack,
    stack,
    store,
    async close() {
      await stack.close();
      await slack.close();
    },
  };
}

/** The alerts stack for the enclosing `describe`, started before its tests and closed after them. */
export function useAlertsStack(alertsToken?: string, options: { policy?: unknown } = {}): AlertsStack {
  return startedForSuite(() => startAlertsStack(alertsToken, options), 120_000);
}

/**
 * What the alert tests look at: the root message an alert group opened, its thread, and the session's fix
 * validation. The stack is read on each call, since `useAlertsStack` fills it in only when the suite starts.
 */
export function alertChecks(alerts: Pick<AlertsStack, 'slack' | 'store'>) {
  function roots(channel: string, alertName: string) {
    return alerts.slack
      .messages(channel)
      .filter((m) => (m.thread_ts === undefined || m.thread_ts === m.ts) && m.text.includes(alertName));
  }

  function thread(channel: string, ts: string) {
    return alerts.slack
      .messages(channel)
      .filter((m) => m.thread_ts === ts && m.ts !== ts)
      .map(renderMessage);
  }

  const waitForThread = (channel: string, ts: string, pattern: RegExp) =>
    waitFor(
      `a thread message matching ${pattern}`,
      async () => thread(channel, ts).find((t) => pattern.test(t)),
      30_000,
    );

  /** The fresh triage an alert's resolution starts ends in the session's fix validation. */
  const waitForFixValidation = (sessionId: string) =>
    waitFor(
      'the fix validation',
      async () => (await alerts.store.timeline.list(sessionId)).find((e) => e.type === 'fix.validated'),
      60_000,
    );

  return { roots, thread, waitForThread, waitForFixValidation };
}
