import type { Logger } from '@aws-lambda-powertools/logger';
import { loadConfig, resolveSlackCredentials } from '../config.js';
import { createSlackClient } from '../slack/client.js';
import type { TemplateRegistry } from '../triage/templates.js';
import {
  buildWorkflowDeps,
  createAwsClients,
  type ThreadPoster,
  type WorkflowDeps,
  type WorkflowMetrics,
  webClientPoster,
} from './deps.js';

export interface RuntimeOverrides {
  /** Replaces the Slack poster (tests count and time posts through it). */
  slack?: ThreadPoster;
  metrics?: WorkflowMetrics;
  logger?: Logger;
  templates?: TemplateRegistry;
  now?: () => Date;
}

/**
 * Everything the workflow and notifier functions need, from one environment. Configuration errors surface at once
 * (ConfigError lists every bad variable); the Slack secret is read once per cold start.
 */
export async function createWorkflowRuntime(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: RuntimeOverrides = {},
): Promise<WorkflowDeps> {
  const config = loadConfig(env, ['table', 'stateMachines', 'slack', 'policy', 'timeouts', 'aws']);
  const credentials = await resolveSlackCredentials(config.slack);
  const slackClient = createSlackClient({
    token: credentials.botToken,
    ...(config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl } : {}),
    timeoutMs: 2500,
    retries: 2,
  });
  return buildWorkflowDeps({
    tableName: config.table.tableName,
    clients: createAwsClients(config.aws, env),
    slack: overrides.slack ?? webClientPoster(slackClient),
    slackClient,
    stateMachines: config.stateMachines,
    timeouts: config.timeouts,
    policy: config.policy.policy,
    ...(overrides.logger ? { logger: overrides.logger } : {}),
    ...(overrides.metrics ? { metrics: overrides.metrics } : {}),
    ...(overrides.templates ? { templates: overrides.templates } : {}),
    ...(overrides.now ? { now: overrides.now } : {}),
  });
}
