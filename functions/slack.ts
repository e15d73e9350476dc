import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context, EventBridgeEvent } from 'aws-lambda';
import type { RoutedHttpRequest } from '../src/alerts/http.js';
import type { AlarmEventOutcome } from '../src/app/alerts-runtime.js';
import {
  type AlarmEventFunction,
  containerRuntime,
  createAlarmEventFunction,
  createSlackFunction,
  type SlackFunction,
} from '../src/app/slack-runtime.js';
import type { FunctionHttpResponse } from '../src/http/function-http.js';

/**
 * The Slack function (API Gateway HTTP API or a Function URL): Slack's signed requests in, an answer within 3 s out;
 * Alertmanager's notifications on `/alerts/alertmanager`; and, from EventBridge, CloudWatch alarm state changes.
 * Dependencies are built once per container; a failed build is retried on the next request rather than cached.
 * Every log line carries the request's Slack event id and Lambda request id.
 */

type AlarmEvent = EventBridgeEvent<string, unknown>;

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

// One set of dependencies per container, shared by the request path and the EventBridge path.
const runtime = containerRuntime();
const slackFunction = createSlackFunction(process.env, {}, runtime);

/** The same path the Lambda runs, for the local HTTP server and tests. */
export async function handleSlackHttp(request: RoutedHttpRequest, context?: Context): Promise<FunctionHttpResponse> {
  return slackFunction(request, context);
}

/** Builds what the first request would, for a server that announces itself only once it answers in time. */
export function prepareSlackHttp(): Promise<void> {
  return slackFunction.prepare();
}

export const handler = createSlackLambdaHandler({
  http: handleSlackHttp,
  alarms: createAlarmEventFunction(process.env, {}, runtime),
});
