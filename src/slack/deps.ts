import type { WebClient } from '@slack/web-api';
import type { LogPort } from '../logging/port.js';
import type { GroupMembership, Policy } from '../policy/channel-policy.js';
import type { Store } from '../store/index.js';
import type { TemplateRegistry } from '../triage/templates/index.js';
import type { WorkflowApi } from '../workflow/api.js';

export interface SlackAppDeps {
  signingSecret: string;
  botToken: string;
  /** The Web API client every handler uses (createSlackClient: short timeout, few retries). */
  client: WebClient;
  store: Store;
  policy: Policy;
  membership: GroupMembership;
  registry: TemplateRegistry;
  workflow: WorkflowApi;
  /** How long an approval stays decidable (break-glass requests created here). */
  approvalTimeoutSeconds: number;
  now?: () => Date;
  logger?: LogPort;
  /** Skips the `auth.test` lookup of the bot's own ids when known. */
  botUserId?: string;
  botId?: string;
}
