import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import {
  createSlackHttpHandler,
  type SlackHttpHandler,
  type SlackHttpRequest,
  type SlackHttpResponse,
} from '../src/slack/receiver.js';
import { createSlackDepsFromEnv } from '../src/slack/runtime.js';

/**
 * The Slack function (API Gateway HTTP API or a Function URL): Slack's signed requests in, an answer within 3 s out.
 * Dependencies are built once per container; a failed build is retried on the next request rather than cached.
 */

let handlerPromise: Promise<SlackHttpHandler> | undefined;

function slackHandler(): Promise<SlackHttpHandler> {
  handlerPromise ??= createSlackDepsFromEnv().then(createSlackHttpHandler, (error: unknown) => {
    handlerPromise = undefined;
    throw error;
  });
  return handlerPromise;
}

/** The same path the Lambda runs, for the local HTTP server and tests. */
export async function handleSlackHttp(request: SlackHttpRequest): Promise<SlackHttpResponse> {
  return (await slackHandler())(request);
}

export async function handler(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const response = await handleSlackHttp({
    headers: event.headers ?? {},
    body: event.body ?? '',
    isBase64Encoded: event.isBase64Encoded === true,
  });
  return { statusCode: response.statusCode, headers: response.headers, body: response.body };
}
