import { createHmac, timingSafeEqual } from 'node:crypto';
import { App, AwsLambdaReceiver, type Logger, LogLevel } from '@slack/bolt';
import type { FunctionHttpRequest, FunctionHttpResponse } from '../http/function-http.js';
import { jsonLogger, type LogPort } from '../logging/port.js';
import type { SlackAppDeps } from './deps.js';
import { registerListeners } from './handlers/index.js';
import { checkSlackBody } from './payload-shape.js';

export type SlackHttpHandler = (request: FunctionHttpRequest) => Promise<FunctionHttpResponse>;

/** Slack's replay window, applied in both directions (Bolt only refuses timestamps in the past). */
export const MAX_CLOCK_SKEW_SECONDS = 300;

export type VerifyResult = { ok: true } | { ok: false; reason: string };

/**
 * Checks Slack's v0 request signature over the body exactly as received. A timestamp more than five minutes away
 * from now, in either direction, is refused: a future timestamp would otherwise keep a captured request replayable.
 */
export function verifySlackSignature(input: {
  signingSecret: string;
  rawBody: string;
  signature: string | undefined;
  timestamp: string | undefined;
  nowSeconds: number;
}): VerifyResult {
  if (input.signature === undefined || input.signature === '')
    return { ok: false, reason: 'missing X-Slack-Signature' };
  if (input.timestamp === undefined || input.timestamp === '') {
    return { ok: false, reason: 'missing X-Slack-Request-Timestamp' };
  }
  if (!/^\d{1,12}$/.test(input.timestamp)) return { ok: false, reason: 'malformed X-Slack-Request-Timestamp' };
  const skew = input.nowSeconds - Number(input.timestamp);
  if (skew > MAX_CLOCK_SKEW_SECONDS) return { ok: false, reason: 'stale request timestamp' };
  if (skew < -MAX_CLOCK_SKEW_SECONDS) return { ok: false, reason: 'request timestamp in the future' };
  const expected = slackSignature(input.signingSecret, input.timestamp, input.rawBody);
  const given = Buffer.from(input.signature, 'utf8');
  const wanted = Buffer.from(expected, 'utf8');
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted))
    return { ok: false, reason: 'signature mismatch' };
  return { ok: true };
}

/**
 * Slack's v0 request signature: `v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<raw body>` keyed with the signing
 * secret. The one place it is computed: verifying here, signing in tests, the sandbox and benchmarks.
 */
export function slackSignature(signingSecret: string, timestamp: number | string, rawBody: string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:${rawBody}`).digest('hex')}`;
}

/** Signs a body the way Slack does; for tests, the sandbox and benchmarks. */
export function signSlackRequest(
  signingSecret: string,
  rawBody: string,
  timestampSeconds: number,
): Record<string, string> {
  const timestamp = String(Math.floor(timestampSeconds));
  return {
    'x-slack-signature': slackSignature(signingSecret, timestamp, rawBody),
    'x-slack-request-timestamp': timestamp,
  };
}

function lowerCaseHeaders(headers: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) if (value !== undefined) out[key.toLowerCase()] = value;
  return out;
}

function respond(statusCode: number, body = '', contentType = 'text/plain; charset=utf-8'): FunctionHttpResponse {
  return { statusCode, headers: { 'content-type': contentType }, body };
}

/** Bolt's logger interface over ours; Bolt's own chatter stays at warn. */
export function boltLogger(logger: LogPort): Logger {
  let level = LogLevel.WARN;
  return {
    debug: () => {},
    info: () => {},
    warn: (...msg: unknown[]) => logger.warn(msg.map(String).join(' ')),
    error: (...msg: unknown[]) => logger.error(msg.map(String).join(' ')),
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}

/** Media type without parameters: Bolt compares it exactly, and Slack may add `; charset=utf-8`. */
function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

const FORM = 'application/x-www-form-urlencoded';

/**
 * Slack's periodic check of a slash command's TLS endpoint: a form POST with `ssl_check=1` and no signature. Bolt's
 * own Lambda receiver answers it before verifying; it carries nothing to act on, so answering it cannot do anything.
 */
function isSslCheck(rawBody: string, type: string): boolean {
  if (type !== FORM && type !== '') return false;
  const form = new URLSearchParams(rawBody);
  return form.get('ssl_check') === '1' && !form.has('command') && !form.has('payload');
}

/**
 * The Slack function: signature and replay checks, then Bolt (`AwsLambdaReceiver`) with the command, event, button
 * and modal handlers. Returns a handler for plain request objects so the Lambda entry point, the local HTTP server
 * and the tests all run the same path.
 */
export function createSlackHttpHandler(deps: SlackAppDeps): SlackHttpHandler {
  const logger = deps.logger ?? jsonLogger;
  const receiver = new AwsLambdaReceiver({ signingSecret: deps.signingSecret, logger: boltLogger(logger) });

  let identity: Promise<{ botUserId?: string; botId?: string }> | undefined;
  const botIdentity = () => {
    if (deps.botUserId !== undefined) return Promise.resolve({ botUserId: deps.botUserId, botId: deps.botId });
    identity ??= deps.client.auth.test().then(
      (r) => ({
        ...(r.user_id === undefined ? {} : { botUserId: r.user_id }),
        ...(r.bot_id === undefined ? {} : { botId: r.bot_id }),
      }),
      (error: unknown) => {
        // Forget the failure so the next request tries again instead of failing forever.
        identity = undefined;
        throw error;
      },
    );
    return identity;
  };

  const app = new App({
    receiver,
    logger: boltLogger(logger),
    // Bolt's own clients (unused by the handlers) must not reach slack.com when the stand-in is configured.
    clientOptions: { slackApiUrl: deps.client.slackApiUrl, timeout: 2500, retryConfig: { retries: 0 } },
    authorize: async () => ({ botToken: deps.botToken, ...(await botIdentity()) }),
  });
  app.error(async (error) => {
    logger.error('unhandled error in a Slack handler', { error: error.message, code: error.code });
  });
  registerListeners(app, deps);
  const lambda = receiver.toHandler();

  return async (request) => {
    const headers = lowerCaseHeaders(request.headers);
    const body = request.body ?? '';
    // Bolt decodes base64 as ASCII, which corrupts any non-ASCII text (and with it the signature).
    const rawBody = request.isBase64Encoded === true ? Buffer.from(body, 'base64').toString('utf8') : body;
    const type = mediaType(headers['content-type']);
    // Before the signature, as Slack sends it unsigned; it is the only request answered without one.
    if (isSslCheck(rawBody, type)) return respond(200);
    const nowSeconds = Math.floor((deps.now?.() ?? new Date()).getTime() / 1000);
    const verified = verifySlackSignature({
      signingSecret: deps.signingSecret,
      rawBody,
      signature: headers['x-slack-signature'],
      timestamp: headers['x-slack-request-timestamp'],
      nowSeconds,
    });
    if (!verified.ok) {
      logger.warn('refused Slack request', { reason: verified.reason });
      return respond(401, verified.reason);
    }
    const shape = checkSlackBody(rawBody, type);
    if (!shape.ok) {
      logger.warn('refused a signed request that is not a Slack payload', { problem: shape.problem });
      return respond(400, `Not a Slack request: ${shape.problem}.`);
    }

    const event = {
      version: '2.0',
      routeKey: 'POST /slack/events',
      rawPath: '/slack/events',
      rawQueryString: '',
      requestContext: {},
      headers: { ...headers, 'content-type': type },
      body: rawBody,
      isBase64Encoded: false,
    };
    const result = (await lambda(event, {})) as { statusCode: number; headers?: Record<string, string>; body?: string };
    if (result.statusCode === 404) {
      // Bolt answers 404 when no listener acknowledged: an event or interaction calmops does not handle. Slack shows
      // a 404 to the person as an error and retries events, so it gets a plain acknowledgement instead.
      logger.info('acknowledged a Slack request no handler takes');
      return respond(200);
    }
    return {
      statusCode: result.statusCode,
      headers: { 'content-type': 'text/plain; charset=utf-8', ...lowerCaseHeaders(result.headers ?? {}) },
      body: result.body ?? '',
    };
  };
}
