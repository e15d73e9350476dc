import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PolicyError, parsePolicy, parsePolicyText } from '../../../src/policy/channel-policy.js';

const base = {
  defaults: { cluster: 'shared', approverGroup: 'SAPPROVERS', seniorGroup: 'SSENIORS' },
  channels: { CPAYMENTS: { cluster: 'prod-eu' }, CPLATFORM: { cluster: 'prod-eu' } },
};

describe('alert routing in the channel policy', () => {
  it('routes by namespace, cluster and severity, first match wins, else the default channel', () => {
    const policy = parsePolicy({
      ...base,
      alerts: {
        channel: 'CALERTS',
        routes: [
          { namespace: 'payments', channel: 'CPAYMENTS' },
          { cluster: 'prod-eu', severity: 'critical', channel: 'CPLATFORM' },
          { severity: 'critical', channel: 'CSRE' },
        ],
      },
    });
    expect(policy.alertChannel({ namespace: 'payments', cluster: 'prod-eu', severity: 'critical' })).toBe('CPAYMENTS');
    expect(policy.alertChannel({ namespace: 'shop', cluster: 'prod-eu', severity: 'critical' })).toBe('CPLATFORM');
    expect(policy.alertChannel({ namespace: 'shop', cluster: 'prod-eu', severity: 'warning' })).toBe('CALERTS');
    expect(policy.alertChannel({ cluster: 'prod-us', severity: 'critical' })).toBe('CSRE');
    expect(policy.alertChannel({})).toBe('CALERTS');
  });

  it('takes no alerts without an alerts section, and existing policies stay valid', () => {
    expect(parsePolicy(base).alertChannel({ namespace: 'payments' })).toBeUndefined();
    const example = parsePolicyText(
      readFileSync(new URL('../../../docs/policy.example.yaml', import.meta.url), 'utf8'),
    );
    expect(example.forChannel('C0EXAMPLE01')?.cluster).toBe('prod');
  });

  it('refuses routes to channels the policy does not cover, empty matches and unknown keys', () => {
    // Without defaults only listed channels are covered.
    const listedOnly = {
      channels: { CPAYMENTS: { cluster: 'prod-eu', approverGroup: 'SAPPROVERS', seniorGroup: 'SSENIORS' } },
    };
    expect(() => parsePolicy({ ...listedOnly, alerts: { channel: 'CPAYMENTS' } })).not.toThrow();
    expect(() => parsePolicy({ ...listedOnly, alerts: { channel: 'CNOWHERE' } })).toThrow(
      /alerts\.channel: CNOWHERE has no channel policy/,
    );
    expect(() =>
      parsePolicy({
        ...listedOnly,
        alerts: { channel: 'CPAYMENTS', routes: [{ severity: 'critical', channel: 'CNOWHERE' }] },
      }),
    ).toThrow(/alerts\.routes\.0\.channel: CNOWHERE has no channel policy/);
    expect(() =>
      parsePolicy({ ...base, alerts: { channel: 'CPAYMENTS', routes: [{ channel: 'CPLATFORM' }] } }),
    ).toThrow(/alerts\.routes\.0: a route matches on namespace, cluster or severity/);
    expect(() => parsePolicy({ ...base, alerts: { channel: 'CPAYMENTS', rotues: [] } })).toThrow(PolicyError);
    expect(() => parsePolicy({ ...base, alerts: { channel: 'payments' } })).toThrow(
      /alerts\.channel: a Slack channel id/,
    );
  });
});
