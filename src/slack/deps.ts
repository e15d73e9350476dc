import type { WebClient } from '@slack/web-api';
import type { LogPort } from '../logging/port.js';
import type { GroupMembership, Policy } from '../policy/channel-policy.js';
import type { Store } from '../store/index.js';
import type { TemplateRegistry } from '../triage/template-registry.js';
import type { TaskAnswer } from '../workflow/engine.js';

/** What starting a session needs (the workflow's `startSession` input). */
export interface StartSessionInput {
  /** Set by a caller that must be able to complete an interrupted start (session-lifecycle.ts). */
  id?: string;
  channelId: string;
  threadTs: string;
  requester: string;
  text: string;
  intent?: string;
  /** Absent when the request names none: the workflow's triage locates it in the cluster. */
  namespace?: string;
  cluster: string;
  /** The channel's namespaces; every read of the session stays inside them. */
  scope: string[];
  note?: string;
}

export type ThreadAction =
  | { type: 'hypothesis'; hypothesisId: string }
  | { type: 'namespace'; namespace: string }
  | { type: 'resolved' }
  | { type: 'break-glass'; requestId: string }
  | { type: 'handoff'; approvalId: string; decision: 'approve' | 'deny' };

/** What delivering thread input needs (the workflow's `deliverInput` input). */
export interface DeliverInputInput {
  sessionId: string;
  userId: string;
  text: string;
  source: 'message' | 'mention' | 'button';
  action?: ThreadAction;
  /** Identifies the input across Slack retries (message ts, action_ts), so it is consumed once. */
  messageKey?: string;
}

/** The output an approval's waiting task receives. */
export interface ApprovalOutcome {
  decision: 'approve' | 'deny' | 'request-changes';
  userId: string;
  note?: string;
  decidedAt: string;
}

/** The workflow operations the Slack function calls; production binds them to Step Functions. */
export interface SlackWorkflow {
  startSession(input: StartSessionInput): Promise<{ sessionId: string; executionArn: string }>;
  deliverInput(input: DeliverInputInput): Promise<unknown>;
  /** Hands the decision to the approval's waiting task; `closed` when nobody waits on it any more. */
  sendTaskSuccess(taskToken: string, output: ApprovalOutcome): Promise<TaskAnswer>;
}

export type SlackLogger = LogPort;

export interface SlackAppDeps {
  signingSecret: string;
  botToken: string;
  /** The Web API client every handler uses (createSlackClient: short timeout, few retries). */
  client: WebClient;
  store: Store;
  policy: Policy;
  membership: GroupMembership;
  registry: TemplateRegistry;
  workflow: SlackWorkflow;
  /** How long an approval stays decidable (break-glass requests created here). */
  approvalTimeoutSeconds: number;
  now?: () => Date;
  logger?: SlackLogger;
  /** Skips the `auth.test` lookup of the bot's own ids when known. */
  botUserId?: string;
  botId?: string;
}

export const silentLogger: SlackLogger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

/** One JSON line per entry, for CloudWatch; never passed tokens or message bodies. */
export const jsonLogger: SlackLogger = {
  debug: () => {},
  info: (message, detail) => console.log(JSON.stringify({ level: 'info', message, ...detail })),
  warn: (message, detail) => console.warn(JSON.stringify({ level: 'warn', message, ...detail })),
  error: (message, detail) => console.error(JSON.stringify({ level: 'error', message, ...detail })),
};
