import { describe, expect, it } from 'vitest';
import type { AlertGroup } from '../../../src/alerts/group.js';
import type { AlertOutcome } from '../../../src/alerts/handler.js';
import {
  ALERTMANAGER_PATH,
  bearerMatches,
  createAlertsHttpHandler,
  isAlertRoute,
  routeRequests,
} from '../../../src/alerts/http.js';
import { alertmanagerBody, crashLooping } from '../../support/alertmanager.js';

const TOKEN = 'local-alert-token-0123456789abcdef0123';

function handler(outcome: AlertOutcome = { outcome: 'duplicate' }, configured: { token?: string } = { token: TOKEN }) {
  const token = configured.token;
  const handled: AlertGroup[] = [];
  const handle = createAlertsHttpHandler({
    token: async () => token,
    handle: async (group) => {
      handled.push(group);
      return outcome;
    },
  });
  return { handle, handled };
}

const body = JSON.stringify(alertmanagerBody({ alerts: [crashLooping('payments', 'checkout-1')] }));
const request = (headers: Record<string, string>, text = body) => ({
  headers: { 'content-type': 'application/json', ...headers },
  body: text,
  path: ALERTMANAGER_PATH,
  method: 'POST',
});

describe('the alert route', () => {
  it('compares the bearer token whole, case-insensitively on the scheme only', () => {
    expect(bearerMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(bearerMatches(`bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(bearerMatches(`Bearer ${TOKEN.toUpperCase()}`, TOKEN)).toBe(false);
    expect(bearerMatches(`Bearer ${TOKEN}x`, TOKEN)).toBe(false);
    expect(bearerMatches(`Bearer ${TOKEN.slice(0, -1)}`, TOKEN)).toBe(false);
    expect(bearerMatches(`Basic ${TOKEN}`, TOKEN)).toBe(false);
    expect(bearerMatches(TOKEN, TOKEN)).toBe(false);
    expect(bearerMatches(undefined, TOKEN)).toBe(false);
    expect(bearerMatches('Bearer ', TOKEN)).toBe(false);
  });

  it('refuses a missing or wrong token, and every token when none is configured', async () => {
    const { handle, handled } = handler();
    expect((await handle(request({}))).statusCode).toBe(401);
    expect((await handle(request({ authorization: 'Bearer nope' }))).statusCode).toBe(401);
    const unconfigured = handler(undefined, {});
    const refused = await unconfigured.handle(request({ authorization: `Bearer ${TOKEN}` }));
    expect(refused.statusCode).toBe(401);
    expect(JSON.parse(refused.body)).toEqual({ error: 'alert intake is not configured (no token)' });
    expect(handled).toEqual([]);
    expect(unconfigured.handled).toEqual([]);
  });

  it('answers a bad body with the paths of its problems, a good one with the outcome', async () => {
    const { handle, handled } = handler({ outcome: 'ignored', reason: 'no open session for this alert group' });
    const bad = await handle(request({ Authorization: `Bearer ${TOKEN}` }, JSON.stringify({ version: '4' })));
    expect(bad.statusCode).toBe(400);
    expect((JSON.parse(bad.body) as { issues: { path: string }[] }).issues.map((i) => i.path)).toContain('groupKey');
    const base64 = await handle({
      ...request({ Authorization: `Bearer ${TOKEN}` }, Buffer.from(body, 'utf8').toString('base64')),
      isBase64Encoded: true,
    });
    expect(base64.statusCode).toBe(200);
    expect(JSON.parse(base64.body)).toEqual({ outcome: 'ignored', reason: 'no open session for this alert group' });
    expect(handled.map((g) => g.alerts[0]?.name)).toEqual(['KubePodCrashLooping']);
  });

  it('asks to be retried when another delivery is opening the group, and refuses what a retry cannot fix', async () => {
    const busy = handler({ outcome: 'retry', reason: 'busy', retryAfterSeconds: 5 });
    const retry = await busy.handle(request({ authorization: `Bearer ${TOKEN}` }));
    expect(retry.statusCode).toBe(503);
    expect(retry.headers['retry-after']).toBe('5');
    const refused = handler({ outcome: 'refused', reason: 'no alerts section', notified: false });
    expect((await refused.handle(request({ authorization: `Bearer ${TOKEN}` }))).statusCode).toBe(422);
    const failing = createAlertsHttpHandler({
      token: async () => TOKEN,
      handle: async () => {
        throw new Error('DynamoDB is down');
      },
    });
    const failed = await failing(request({ authorization: `Bearer ${TOKEN}` }));
    expect(failed.statusCode).toBe(500);
    expect(failed.body).not.toContain('DynamoDB');
    const get = await busy.handle({ ...request({ authorization: `Bearer ${TOKEN}` }), method: 'GET' });
    expect(get.statusCode).toBe(405);
  });

  it('sends only the alert path to the alert handler', async () => {
    expect(isAlertRoute({ path: '/alerts/alertmanager' })).toBe(true);
    expect(isAlertRoute({ path: '/alerts/alertmanager/' })).toBe(true);
    expect(isAlertRoute({ path: '/slack/events' })).toBe(false);
    expect(isAlertRoute({})).toBe(false);
    const seen: string[] = [];
    const route = routeRequests({
      slack: async () => {
        seen.push('slack');
        return { statusCode: 200, headers: {}, body: '' };
      },
      alerts: async () => {
        seen.push('alerts');
        return { statusCode: 200, headers: {}, body: '' };
      },
    });
    await route({ headers: {}, body: '', path: '/slack/events' });
    await route({ headers: {}, body: '' });
    await route({ headers: {}, body: '', path: ALERTMANAGER_PATH });
    expect(seen).toEqual(['slack', 'slack', 'alerts']);
  });
});
