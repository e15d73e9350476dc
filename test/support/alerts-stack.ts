import { DEMO_IDS, demoChannels, type SlackStandIn, startSlackStandIn } from '../../local/slack/index.js';
import { type LocalStack, startLocalStack } from '../../local/stack.js';
import { fixture } from './workflow-harness.js';

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

/**
 * The whole local stack for the alert tests: a Slack stand-in with the on-call channel, the crash-looping `orders`
 * namespace as the cluster, and a policy that sends alerts to the incident channel, and `orders` ones to on-call.
 */
export async function startAlertsStack(alertsToken?: string): Promise<{ slack: SlackStandIn; stack: LocalStack }> {
  const slack = await startSlackStandIn({
    channels: [...demoChannels(), { id: ONCALL, name: 'orders-oncall', is_member: true }],
  });
  const stack = await startLocalStack({
    snapshot: fixture('crashloop-analysis--missing-env'),
    slackApiUrl: slack.url,
    logLevel: 'SILENT',
    ...(alertsToken === undefined ? {} : { alertsToken }),
    policy: {
      defaults: { cluster: 'default', approverGroup: DEMO_IDS.approvers, seniorGroup: DEMO_IDS.seniors },
      alerts: { channel: DEMO_IDS.incidents, routes: [{ namespace: 'orders', channel: ONCALL }] },
    },
  });
  return { slack, stack };
}
