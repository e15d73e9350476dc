import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { loadConfig, resolveSlackCredentials } from '../config.js';
import { type PolicySource, policySourceFor } from '../policy/policy-source.js';
import { createSlackClient } from '../slack/client.js';
import type { TemplateRegistry } from '../triage/templates/index.js';
import type { ThreadPoster, WorkflowDeps, WorkflowMetrics } from '../workflow/deps.js';
import { runStep } from '../workflow/dispatch.js';
import { createAwsClients } from './aws-clients.js';
import { invocationLogger, stepCorrelation } from './correlation.js';
import { powertoolsLogPort } from './log-port.js';
import { stepFunctionsEngine } from './step-functions-engine.js';
import { webClientPoster } from './thread-poster.js';
import { buildWorkflowDeps } from './workflow-deps.js';

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
  return (await buildRuntime(env, overrides)).deps;
}

/** What the workflow and notifier functions keep per container, handing out deps per invocation. */
interface StepRuntime {
  /** The deps for one invocation: the channel policy in force now, and a logger with the invocation's keys. */
  forInvocation(event: unknown, context?: Context): Promise<WorkflowDeps>;
}

async function createStepRuntime(
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: RuntimeOverrides = {},
): Promise<StepRuntime> {
  const { deps, policy, logger: base } = await buildRuntime(env, overrides);
  return {
    async forInvocation(event, context) {
      const logger = powertoolsLogPort(invocationLogger(base, stepCorrelation(event), context));
      return { ...deps, logger, policy: await policy.current() };
    },
  };
}

export type StepHandler = (event: unknown, context?: Context) => Promise<unknown>;

/**
 * The handler of a function that runs steps (the workflow and notifier functions): its runtime built on first use and
 * again after a failed build, each event dispatched through `steps` with the deps of its invocation.
 */
export function createStepHandler(
  steps: Parameters<typeof runStep>[0],
  env: Readonly<Record<string, string | undefined>> = process.env,
  overrides: RuntimeOverrides = {},
): StepHandler {
  let runtime: Promise<StepRuntime> | undefined;
  return async (event, context) => {
    runtime ??= createStepRuntime(env, overrides);
    runtime.catch(() => {
      runtime = undefined;
    });
    return runStep(steps, await (await runtime).forInvocation(event, context), event);
  };
}

async function buildRuntime(
  env: Readonly<Record<string, string | undefined>>,
  overrides: RuntimeOverrides,
): Promise<{ deps: WorkflowDeps; policy: PolicySource; logger: Logger }> {
  const config = loadConfig(env, ['table', 'stateMachines', 'slack', 'policy', 'timeouts', 'aws']);
  const credentials = await resolveSlackCredentials(config.slack);
  const slackClient = createSlackClient({
    token: credentials.botToken,
    ...(config.slack.apiUrl ? { slackApiUrl: config.slack.apiUrl } : {}),
    timeoutMs: 2500,
    retries: 2,
  });
  let deps: WorkflowDeps | undefined;
  const policy = policySourceFor(config.policy, {
    onStale: (error) =>
      deps?.logger.warn('the channel policy could not be refreshed; the previous one stays in force', {
        error: error.message,
      }),
  });
  const initialPolicy = await policy.current();
  const clients = createAwsClients(config.aws, env);
  const logger = overrides.logger ?? new Logger({ serviceName: 'calmops' });
  deps = buildWorkflowDeps({
    tableName: config.table.tableName,
    clients: { dynamo: clients.dynamo },
    engine: stepFunctionsEngine(clients.sfn),
    slack: overrides.slack ?? webClientPoster(slackClient),
    slackClient,
    stateMachines: config.stateMachines,
    timeouts: config.timeouts,
    policy: initialPolicy,
    logger,
    ...(overrides.metrics ? { metrics: overrides.metrics } : {}),
    ...(overrides.templates ? { templates: overrides.templates } : {}),
    ...(overrides.now ? { now: overrides.now } : {}),
  });
  return { deps, policy, logger };
}
