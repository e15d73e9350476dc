import { createHash, timingSafeEqual } from 'node:crypto';
import type { FunctionHttpRequest, FunctionHttpResponse } from '../http/function-http.js';
import type { LogPort } from '../logging/port.js';
import { parseAlertmanagerBody } from './alertmanager.js';
import type { AlertGroup } from './group.js';
import type { AlertOutcome } from './handler.js';

/**
 * The alert route in front of the Slack function: `POST /alerts/alertmanager` with `Authorization: Bearer <token>`.
 * Every other path goes to the Slack handler untouched, so Slack's requests are answered exactly as without it.
 */

export const ALERTMANAGER_PATH = '/alerts/alertmanager';

/** A request as the Slack function receives it, plus where it was sent (API Gateway's `rawPath` and method). */
export interface RoutedHttpRequest extends FunctionHttpRequest {
  path?: string;
  method?: string;
}

export type RoutedHttpHandler = (request: RoutedHttpRequest) => Promise<FunctionHttpResponse>;

/** Whether the request is for the alert route; everything else is Slack's. */
export function isAlertRoute(request: Pick<RoutedHttpRequest, 'path'>): boolean {
  return request.path !== undefined && request.path.replace(/\/+$/, '') === ALERTMANAGER_PATH;
}

export interface AlertsHttpDeps {
  /** The configured token, or undefined when none is: then every request is refused. */
  token(): Promise<string | undefined>;
  handle(group: AlertGroup): Promise<AlertOutcome>;
  logger?: LogPort;
}

function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): FunctionHttpResponse {
  return {
    statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}

function header(headers: FunctionHttpRequest['headers'], name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/**
 * Compares digests rather than the tokens themselves: equal lengths whatever was sent, so neither the comparison's
 * time nor an early length check says anything about the configured token.
 */
export function bearerMatches(authorization: string | undefined, token: string): boolean {
  const given = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '')?.[1] ?? '';
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(token, 'utf8').digest();
  return timingSafeEqual(a, b) && given !== '';
}

export function createAlertsHttpHandler(deps: AlertsHttpDeps): RoutedHttpHandler {
  const answer = answerAlert(deps);
  return async (request) => {
    try {
      return await answer(request);
    } catch (error) {
      // A 5xx makes Alertmanager try again later: nothing of this notification was lost.
      deps.logger?.error('an alert notification failed', { error: (error as Error).message });
      return json(500, { error: 'the notification could not be handled; it will be retried' });
    }
  };
}

function answerAlert(deps: AlertsHttpDeps): RoutedHttpHandler {
  return async (request) => {
    if (request.method !== undefined && request.method.toUpperCase() !== 'POST') {
      return json(405, { error: 'Alertmanager sends POST requests here' }, { allow: 'POST' });
    }
    const token = await deps.token();
    if (token === undefined) {
      deps.logger?.warn('refused an alert: no alert token is configured');
      return json(401, { error: 'alert intake is not configured (no token)' }, { 'www-authenticate': 'Bearer' });
    }
    if (!bearerMatches(header(request.headers, 'authorization'), token)) {
      deps.logger?.warn('refused an alert: missing or wrong bearer token');
      return json(401, { error: 'missing or wrong bearer token' }, { 'www-authenticate': 'Bearer' });
    }
    const body = request.body ?? '';
    const raw = request.isBase64Encoded === true ? Buffer.from(body, 'base64').toString('utf8') : body;
    const parsed = parseAlertmanagerBody(raw);
    if (!parsed.ok) {
      deps.logger?.warn('refused an alert body', { issues: parsed.issues.map((i) => i.path) });
      return json(400, { error: 'not an Alertmanager webhook notification (version 4)', issues: parsed.issues });
    }
    const outcome = await deps.handle(parsed.group);
    deps.logger?.info('alert notification handled', {
      outcome: outcome.outcome,
      ...('sessionId' in outcome ? { sessionId: outcome.sessionId } : {}),
    });
    switch (outcome.outcome) {
      case 'retry':
        // Alertmanager retries a 5xx: another delivery is finishing the same work, or the workflow was unavailable.
        return json(503, outcome, { 'retry-after': String(outcome.retryAfterSeconds) });
      case 'refused':
        return outcome.notified ? json(200, outcome) : json(422, outcome);
      default:
        return json(200, outcome);
    }
  };
}

/** Sends the alert route to the alert handler and everything else, unchanged, to Slack's. */
export function routeRequests(handlers: { slack: RoutedHttpHandler; alerts: RoutedHttpHandler }): RoutedHttpHandler {
  return (request) => (isAlertRoute(request) ? handlers.alerts(request) : handlers.slack(request));
}
