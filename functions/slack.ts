import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { RoutedHttpRequest } from '../src/alerts/http.js';
import type { SlackHttpResponse } from '../src/slack/receiver.js';
import { createSlackFunction } from '../src/slack/runtime.js';

/**
 * The Slack function (API Gateway HTTP API or a Function URL): Slack's signed requests in, an answer within 3 s out.
 * Dependencies are built once per container; a failed build is retried on the next request rather than cached.
 * Every log line carries the request's Slack event id and Lambda request id.
 */

const slackFunction = createSlackFunction();

/** The same path the Lambda runs, for the local HTTP server and tests. */
export async function handleSlackHttp(request: RoutedHttpRequest, context?: Context): Promise<SlackHttpResponse> {
  return slackFunction(request, context);
}

export async function handler(
  event: APIGatewayProxyEventV2,
  context?: Context,
): Promise<APIGatewayProxyStructuredResultV2> {
  const response = await handleSlackHttp(
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
}
