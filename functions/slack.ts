import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context, EventBridgeEvent } from 'aws-lambda';
import type { RoutedHttpRequest } from '../src/alerts/http.js';
import { type AlarmEventHandler, type AlarmEventOutcome, createAlarmEventHandler } from '../src/app/alerts-runtime.js';
import {
  createSlackFunction,
  createSlackRuntime,
  type SlackFunction,
  type SlackRuntime,
} from '../src/app/slack-runtime.js';
import { withCorrelation } from '../src/logging/correlation.js';
import { parsePolicy } from '../src/policy/channel-policy.js';
import type { SlackHttpResponse } from '../src/slack/receiver.js';

/**
 * The Slack function (API Gateway HTTP API or a Function URL): Slack's signed requests in, an answer within 3 s out;
 * Alertmanager's notifications on `/alerts/alertmanager`; and, from EventBridge, CloudWatch alarm state changes.
 * Dependencies are built once per container; a failed build is retried on the next request rather than cached.
 * Every log line carries the request's Slack event id and Lambda request id.
 */

type Env = Readonly<Record<string, string | undefined>>;
type AlarmEvent = EventBridgeEvent<string, unknown>;
export type AlarmEventFunction = (event: AlarmEvent, context?: Context) => Promise<AlarmEventOutcome>;

// Without a policy no channel is set up: an alarm is then refused like an alert.
const NO_CHANNELS = parsePolicy({});

/**
 * The EventBridge path, over dependencies of its own built on first use (a failed build is retried on the next event).
 * The channel policy in force is read per event, as for a request.
 */
export function createAlarmEventFunction(
  env: Env = process.env,
  options: { logger?: Logger } = {},
): AlarmEventFunction {
  let ready: Promise<{ runtime: SlackRuntime; handle: AlarmEventHandler }> | undefined;
  return async (event, context) => {
    ready ??= createSlackRuntime(env, options).then(
      (runtime) => ({ runtime, handle: createAlarmEventHandler(runtime.deps) }),
      (error: unknown) => {
        ready = undefined;
        throw error;
      },
    );
    const { runtime, handle } = await ready;
    return withCorrelation(runtime.logger, {}, context, async () => {
      runtime.deps.policy = (await runtime.policy.current()) ?? NO_CHANNELS;
      return handle(event);
    });
  };
}

/**
 * EventBridge events carry `detail-type`; API Gateway's never do. Checked first, so an event never reaches the Slack
 * request path, whatever it holds.
 */
export function isEventBridgeEvent(event: unknown): event is AlarmEvent {
  return typeof event === 'object' && event !== null && 'detail-type' in event;
}

export type SlackLambdaHandler = (
  event: APIGatewayProxyEventV2 | AlarmEvent,
  context?: Context,
) => Promise<APIGatewayProxyStructuredResultV2 | AlarmEventOutcome>;

/** The Lambda entry over its two paths; tests build it over a local stack's environment. */
export function createSlackLambdaHandler(paths: {
  http: SlackFunction;
  alarms: AlarmEventFunction;
}): SlackLambdaHandler {
  return async (event, context) => {
    if (isEventBridgeEvent(event)) return paths.alarms(event, context);
    const response = await paths.http(
      {
        headers: event.headers ?? {},
        body: event.body ?? '',
        isBase64Encoded: event.isBase64Encoded === true,
        ...(event.rawPath === undefined ? {} : { path: event.rawPath }),
        ...(event.requestContext?.http?.method === undefined ? {} : { method: event.requestContext.http.method }),
      },
      context,
    );
    return { statusCode: response.statusCode, headers: response.headers, body: response.body };
  };
}

const slackFunction = createSlackFunction();

/** The same path the Lambda runs, for the local HTTP server and tests. */
export async function handleSlackHttp(request: RoutedHttpRequest, context?: Context): Promise<SlackHttpResponse> {
  return slackFunction(request, context);
}

export const handler = createSlackLambdaHandler({ http: handleSlackHttp, alarms: createAlarmEventFunction() });
