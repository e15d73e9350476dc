import { Logger } from '@aws-lambda-powertools/logger';
import type { Context, EventBridgeEvent } from 'aws-lambda';
import { isAlertRoute, type RoutedHttpHandler, type RoutedHttpRequest } from '../alerts/http.js';
import { loadConfig, resolveSlackCredentials } from '../config.js';
import type { FunctionHttpResponse } from '../http/function-http.js';
import { GroupMembership, parsePolicy } from '../policy/channel-policy.js';
import { type PolicySource, policySourceFor } from '../policy/policy-source.js';
import { createSlackClient } from '../slack/client.js';
import type { SlackAppDeps } from '../slack/deps.js';
import { createSlackHttpHandler } from '../slack/receiver.js';
import { createDocumentClient } from '../store/client.js';
import { createStore } from '../store/index.js';
import { loadTemplates } from '../triage/templates/index.js';
import {
  type AlarmEventHandler,
  type AlarmEventOutcome,
  createAlarmEventHandler,
  createAlertsRoute,
} from './alerts-runtime.js';
import { createAwsClients } from './aws-clients.js';
import { slackCorrelation, withCorrelation } from './correlation.js';
import { powertoolsLogPort } from './log-port.js';
import { stepFunctionsEngine } from './step-functions-engine.js';
import { webClientPoster } from './thread-poster.js';
import { workflowApi } from './workflow-api.js';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Everything the Slack function needs, from the environment: table, state machines, Slack credentials (environment
 * or Secrets Manager), the channel policy and timeouts. Endpoints come only from the SDK's standard
 * `AWS_ENDPOINT_URL_*` variables, and `SLACK_API_URL` points the Web API client at the local stand-in.
 */
export async function createSlackDepsFromEnv(
  env: Env = process.env,
  options: { now?: () => Date; logger?: Logger } = {},
): Promise<SlackAppDeps> {
  return (await createSlackRuntime(env, options)).deps;
}

/** The Slack function's per-container state: its deps, the logger they write to, and where the policy comes from. */
interface SlackRuntime {
  deps: SlackAppDeps;
  logger: Logger;
  policy: PolicySource;
}

async function createSlackRuntime(
  env: Env = process.env,
  options: { now?: () => Date; logger?: Logger } = {},
): Promise<SlackRuntime> {
  const config = loadConfig(env, ['table', 'stateMachines', 'slack', 'policy', 'timeouts', 'aws']);
  const credentials = await resolveSlackCredentials(config.slack);
  const clients = createAwsClients(config.aws, env);
  const store = createStore({ client: createDocumentClient(clients.dynamo), tableName: config.table.tableName });
  const client = createSlackClient({
    token: credentials.botToken,
    ...(config.slack.apiUrl === undefined ? {} : { slackApiUrl: config.slack.apiUrl }),
    timeoutMs: 2500,
    retries: 2,
  });
  const templates = loadTemplates();
  const powertools = options.logger ?? new Logger({ serviceName: 'calmops-slack' });
  const source = policySourceFor(config.policy, {
    onStale: (error) =>
      powertools.warn('the channel policy could not be refreshed; the previous one stays in force', {
        error: error.message,
      }),
  });
  const policy = (await source.current()) ?? NO_CHANNELS;
  const now = options.now ?? (() => new Date());
  const workflow = workflowApi(
    {
      store,
      engine: stepFunctionsEngine(clients.sfn),
      stateMachines: config.stateMachines,
      timeouts: config.timeouts,
      templates,
      logger: powertoolsLogPort(powertools),
      now,
    },
    webClientPoster(client).post,
  );
  const deps: SlackAppDeps = {
    signingSecret: credentials.signingSecret,
    botToken: credentials.botToken,
    client,
    store,
    policy,
    membership: new GroupMembership(client, policy.membershipCacheSeconds),
    registry: templates,
    approvalTimeoutSeconds: config.timeouts.approvalTimeoutSeconds,
    now,
    logger: powertoolsLogPort(powertools),
    workflow,
  };
  return { deps, logger: powertools, policy: source };
}

// Without a policy no channel is set up: every request is answered with how to configure one.
const NO_CHANNELS = parsePolicy({});

export type SlackFunction = (request: RoutedHttpRequest, context?: Context) => Promise<FunctionHttpResponse>;

interface PreparedSlackFunction extends SlackFunction {
  /**
   * Builds now what the first request would (the dependencies, the Bolt app), so that request is answered within
   * Slack's 3 s like any other. A failed build is left for that request to retry and report.
   */
  prepare(): Promise<void>;
}

/**
 * The Slack function's dependencies for one container, built on first use and shared by its request path and its
 * EventBridge path; a failed build is retried on the next request or event rather than cached.
 */
export type ContainerRuntime = () => Promise<SlackRuntime>;

export function containerRuntime(env: Env = process.env, options: { logger?: Logger } = {}): ContainerRuntime {
  let ready: Promise<SlackRuntime> | undefined;
  return () => {
    ready ??= createSlackRuntime(env, options).catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };
}

/**
 * Runs one request or event with the channel policy in force (cached by the Parameters and Secrets extension) and its
 * correlation ids logged.
 */
function withPolicy<T>(
  runtime: SlackRuntime,
  keys: Parameters<typeof withCorrelation>[1],
  context: Context | undefined,
  work: () => Promise<T>,
): Promise<T> {
  return withCorrelation(runtime.logger, keys, context, async () => {
    // The handlers read `deps.policy` on every request, so replacing it here is all a policy change needs.
    runtime.deps.policy = (await runtime.policy.current()) ?? NO_CHANNELS;
    return work();
  });
}

/**
 * The Slack function's request path: per request the channel policy in force and log lines that carry the request's
 * Slack event id. `POST /alerts/alertmanager` goes to the alert route (src/alerts/), built on first use over the same
 * dependencies; every other path is Slack's.
 */
export function createSlackFunction(
  env: Env = process.env,
  options: { logger?: Logger } = {},
  runtimeOf: ContainerRuntime = containerRuntime(env, options),
): PreparedSlackFunction {
  let built: { runtime: SlackRuntime; handle: ReturnType<typeof createSlackHttpHandler> } | undefined;
  let alerts: RoutedHttpHandler | undefined;
  const handlerOf = async () => {
    const runtime = await runtimeOf();
    if (built?.runtime !== runtime) built = { runtime, handle: createSlackHttpHandler(runtime.deps) };
    return built;
  };
  const slackFunction = async (request: RoutedHttpRequest, context?: Context) => {
    const { runtime, handle } = await handlerOf();
    return withPolicy(runtime, slackCorrelation(request), context, async () => {
      if (isAlertRoute(request)) {
        try {
          alerts ??= createAlertsRoute(env, runtime.deps);
        } catch (error) {
          runtime.logger.error('the alert route is not configured correctly', { error: (error as Error).message });
          return {
            statusCode: 500,
            headers: { 'content-type': 'application/json; charset=utf-8' },
            body: JSON.stringify({ error: 'the alert route is not configured correctly; see the function log' }),
          };
        }
        return alerts(request);
      }
      return handle(request);
    });
  };
  const prepare = async () => {
    await handlerOf().catch(() => undefined);
  };
  return Object.assign(slackFunction, { prepare });
}

export type AlarmEventFunction = (
  event: EventBridgeEvent<string, unknown>,
  context?: Context,
) => Promise<AlarmEventOutcome>;

/** The EventBridge path: CloudWatch alarm state changes, over the same dependencies and policy as the requests. */
export function createAlarmEventFunction(
  env: Env = process.env,
  options: { logger?: Logger } = {},
  runtimeOf: ContainerRuntime = containerRuntime(env, options),
): AlarmEventFunction {
  let built: { runtime: SlackRuntime; handle: AlarmEventHandler } | undefined;
  return async (event, context) => {
    const runtime = await runtimeOf();
    if (built?.runtime !== runtime) built = { runtime, handle: createAlarmEventHandler(runtime.deps) };
    const { handle } = built;
    return withPolicy(runtime, {}, context, () => handle(event));
  };
}
