import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';

const ARN = (name: string) => `arn:aws:states:us-east-1:123456789012:stateMachine:${name}`;

describe('loadConfig', () => {
  it('reads every section with its defaults', () => {
    const config = loadConfig(
      {
        CALMOPS_DIAGNOSTIC_SM_ARN: ARN('d'),
        CALMOPS_REVIEW_SM_ARN: ARN('r'),
        CALMOPS_BREAK_GLASS_SM_ARN: ARN('b'),
        SLACK_BOT_TOKEN: 'xoxb-1',
        SLACK_SIGNING_SECRET: 's',
        KUBECONFIG: '/kube/config',
      },
      ['table', 'stateMachines', 'slack', 'clusters', 'policy', 'timeouts', 'aws'],
    );
    expect(config.table.tableName).toBe('calmops');
    expect(config.stateMachines.reviewArn).toBe(ARN('r'));
    expect(config.slack).toMatchObject({ source: 'env' });
    expect(config.clusters.clusters).toEqual({ default: { kubeconfigFile: '/kube/config' } });
    expect(config.policy.policy).toBeUndefined();
    expect(config.timeouts).toEqual({ idleTimeoutSeconds: 14_400, approvalTimeoutSeconds: 3_600 });
    expect(config.aws.region).toBe('us-east-1');
  });

  it('parses only the sections asked for', () => {
    expect(loadConfig({ CALMOPS_CLUSTERS: '{"prod":{"kubeconfigFile":"/k"}}' }, ['clusters'])).toEqual({
      clusters: { clusters: { prod: { kubeconfigFile: '/k' } } },
    });
  });

  it('lists every bad variable in one error, without echoing secrets', () => {
    let error: unknown;
    try {
      loadConfig(
        {
          CALMOPS_DIAGNOSTIC_SM_ARN: 'not-an-arn',
          SLACK_BOT_TOKEN: 'secret-value-123',
          SLACK_SIGNING_SECRET: 'x',
          CALMOPS_CLUSTERS: '{nope',
          CALMOPS_IDLE_TIMEOUT_SECONDS: 'four hours',
          CALMOPS_POLICY_JSON: '{"channels": {"bad": {}}}',
          AWS_ENDPOINT_URL_SFN: 'ftp://x',
        },
        ['stateMachines', 'slack', 'clusters', 'timeouts', 'policy', 'aws'],
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const v of [
      'CALMOPS_DIAGNOSTIC_SM_ARN',
      'CALMOPS_REVIEW_SM_ARN',
      'CALMOPS_BREAK_GLASS_SM_ARN',
      'SLACK_BOT_TOKEN',
      'CALMOPS_CLUSTERS',
      'CALMOPS_IDLE_TIMEOUT_SECONDS',
      'CALMOPS_POLICY_JSON',
      'AWS_ENDPOINT_URL_SFN',
    ]) {
      expect(problems).toContain(v);
    }
    expect(problems).not.toContain('secret-value-123');
  });

  it('takes Slack credentials from a secret ARN when no token is set', () => {
    const arn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:calmops/slack-AbCdEf';
    expect(loadConfig({ CALMOPS_SLACK_SECRET_ARN: arn }, ['slack']).slack).toEqual({
      source: 'secret',
      secretArn: arn,
      extension: { endpoint: 'http://localhost:2773' },
    });
    expect(() => loadConfig({}, ['slack'])).toThrow(/CALMOPS_SLACK_SECRET_ARN/);
  });
});
