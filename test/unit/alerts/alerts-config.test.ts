import { describe, expect, it } from 'vitest';
import { alertsChannelOf, banner, type RunningCalmops } from '../../../local/start.js';
import { ConfigError, loadConfig, resolveAlertsToken } from '../../../src/config.js';

const TOKEN = '0123456789abcdef0123456789abcdef';
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:calmops/alerts-AbCdEf';

describe('the alert token configuration', () => {
  it('comes from ALERTS_TOKEN locally, a secret in AWS, or nowhere', async () => {
    expect(loadConfig({ ALERTS_TOKEN: TOKEN }, ['alerts']).alerts).toEqual({ source: 'env', token: TOKEN });
    expect(loadConfig({ ALERTS_TOKEN_SECRET_ARN: ARN }, ['alerts']).alerts).toEqual({
      source: 'secret',
      secretArn: ARN,
      extension: { endpoint: 'http://localhost:2773' },
    });
    expect(loadConfig({}, ['alerts']).alerts).toEqual({ source: 'none' });
    expect(await resolveAlertsToken({ source: 'env', token: TOKEN })).toBe(TOKEN);
    expect(await resolveAlertsToken({ source: 'none' })).toBeUndefined();
  });

  it('refuses a short token, both sources at once and a malformed ARN, never echoing the token', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env, ['alerts']);
      } catch (error) {
        if (error instanceof ConfigError) return error.problems;
        throw error;
      }
      return [];
    };
    expect(problems({ ALERTS_TOKEN: 'short-secret' })).toEqual(['ALERTS_TOKEN: must be at least 32 characters']);
    expect(problems({ ALERTS_TOKEN: `${TOKEN} x` })).toEqual(['ALERTS_TOKEN: printable ASCII without spaces']);
    expect(problems({ ALERTS_TOKEN: TOKEN, ALERTS_TOKEN_SECRET_ARN: ARN })).toEqual([
      'ALERTS_TOKEN: set it or ALERTS_TOKEN_SECRET_ARN, not both',
    ]);
    expect(problems({ ALERTS_TOKEN_SECRET_ARN: 'calmops/alerts' })).toEqual([
      'ALERTS_TOKEN_SECRET_ARN: must be a Secrets Manager secret ARN',
    ]);
    expect(JSON.stringify(problems({ ALERTS_TOKEN: 'short-secret' }))).not.toContain('short-secret');
  });

  it('is not read by the sections the Slack function needs', () => {
    // A broken alert token must not stop Slack's requests: the Slack sections load without it.
    expect(() => loadConfig({ ALERTS_TOKEN: 'short' }, ['table', 'aws'])).not.toThrow();
  });
});

describe('npm start and alerts', () => {
  it('prints the alert URL and the token cut short, and says when the policy takes no alerts', () => {
    const running = {
      mode: 'sandbox',
      origin: 'http://127.0.0.1:3000',
      sandboxUrl: 'http://127.0.0.1:3000/sandbox/',
      cluster: { kind: 'demo', file: '/demo.yaml' },
      namespaces: [],
      alerts: { url: 'http://127.0.0.1:3000/alerts/alertmanager', token: TOKEN, channel: 'CINCIDENTS' },
    } as unknown as RunningCalmops;
    const text = banner(running);
    expect(text).toContain(
      `Alertmanager webhook: http://127.0.0.1:3000/alerts/alertmanager   Authorization: Bearer ${TOKEN.slice(0, 4)}…`,
    );
    expect(text).not.toContain(TOKEN);
    expect(text).toContain('the file alerts-token in the data directory');
    expect(text).toContain('alerts open their incident threads in CINCIDENTS');
    const none = banner({ ...running, alerts: { url: running.alerts.url, token: TOKEN } });
    expect(none).toContain('your channel policy has no alerts section');
    expect(alertsChannelOf({ alerts: { channel: 'CPAYMENTS' } })).toEqual({ channel: 'CPAYMENTS' });
    expect(alertsChannelOf({ defaults: {} })).toEqual({});
    expect(alertsChannelOf(undefined)).toEqual({});
  });
});
