import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPolicyFile, PolicyFileError } from '../../../cdk/policy.js';
import { CONTEXT_KEYS, parseSettings, SettingsError } from '../../../cdk/settings.js';

const settings = (context: Record<string, unknown>) => parseSettings((key) => context[key]);

describe('deployment settings from context', () => {
  it('default to one cluster, protected AWS-managed table, 30-day logs and the contract timeouts', () => {
    expect(settings({})).toEqual({
      stackName: 'calmops',
      clusters: ['default'],
      tableDeletionProtection: true,
      tableEncryption: 'aws-managed',
      logRetentionDays: 30,
      idleTimeoutSeconds: 14_400,
      approvalTimeoutSeconds: 3_600,
      alarmNamePrefix: 'calmops-',
    });
  });

  it('take an alarm name prefix of printable characters', () => {
    expect(settings({ alarmNamePrefix: 'prod/k8s ' }).alarmNamePrefix).toBe('prod/k8s ');
    expect(() => settings({ alarmNamePrefix: ' calmops' })).toThrow(/context alarmNamePrefix: printable ASCII/);
    expect(() => settings({ alarmNamePrefix: 'calmops\n' })).toThrow(/context alarmNamePrefix/);
    expect(() => settings({ alarmNamePrefix: 'x'.repeat(201) })).toThrow(/context alarmNamePrefix/);
  });

  it('accept command-line strings and cdk.json values alike', () => {
    const fromCli = settings({
      clusters: ' prod, staging ',
      tableDeletionProtection: 'false',
      logRetentionDays: '90',
      idleTimeoutSeconds: '600',
    });
    const fromJson = settings({
      clusters: ['prod', 'staging'],
      tableDeletionProtection: false,
      logRetentionDays: 90,
      idleTimeoutSeconds: 600,
    });
    expect(fromCli).toEqual(fromJson);
    expect(fromCli.clusters).toEqual(['prod', 'staging']);
  });

  it('name the context key of every bad value', () => {
    const attempt = () =>
      settings({ clusters: 'Prod_1', logRetentionDays: '10', tableEncryption: 'none', alarmEmail: 'nope' });
    expect(attempt).toThrow(SettingsError);
    expect(attempt).toThrow(/context clusters\.0: cluster names are lowercase/);
    expect(attempt).toThrow(/context logRetentionDays: must be one of CloudWatch Logs' retention periods/);
    expect(attempt).toThrow(/context tableEncryption/);
    expect(attempt).toThrow(/context alarmEmail/);
  });

  it('reject a cluster listed twice and an empty cluster list', () => {
    expect(() => settings({ clusters: 'prod,prod' })).toThrow(/a cluster is listed twice/);
    expect(() => settings({ clusters: [] })).toThrow(/name at least one cluster/);
  });

  it('list every key it reads', () => {
    expect([...CONTEXT_KEYS].sort()).toEqual(
      [
        'alarmEmail',
        'alarmTopicArn',
        'approvalTimeoutSeconds',
        'clusters',
        'idleTimeoutSeconds',
        'logRetentionDays',
        'policyFile',
        'stackName',
        'tableDeletionProtection',
        'tableEncryption',
        'vpcId',
        'subnetIds',
        'securityGroupIds',
        'vpcEndpoints',
        'alarmNamePrefix',
      ].sort(),
    );
  });
});

describe('policy file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'calmops-policy-'));
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const valid = [
    'defaults:',
    '  cluster: prod',
    '  approverGroup: S0APPROVE',
    '  seniorGroup: S0SENIOR',
    'channels:',
    '  C0INCIDENT:',
    '    allowedIntents: [crashloop-analysis]',
    '',
  ].join('\n');

  it('turns a valid YAML policy into compact JSON', () => {
    const json = loadPolicyFile(write('policy.yaml', valid), ['prod']);
    expect(JSON.parse(json)).toEqual({
      defaults: { cluster: 'prod', approverGroup: 'S0APPROVE', seniorGroup: 'S0SENIOR' },
      channels: { C0INCIDENT: { allowedIntents: ['crashloop-analysis'] } },
    });
    expect(json).not.toContain('\n');
  });

  it('reports unreadable and malformed files with the path', () => {
    expect(() => loadPolicyFile(join(dir, 'missing.yaml'), ['prod'])).toThrow(
      /cannot read the policy file .*missing\.yaml \(context policyFile\)/,
    );
    expect(() => loadPolicyFile(write('bad.yaml', 'a: [1, 2'), ['prod'])).toThrow(
      /bad\.yaml is not valid YAML or JSON/,
    );
  });

  it('applies the Slack app rules: unknown intents and channel ids fail', () => {
    const badIntent = valid.replace('crashloop-analysis', 'make-coffee');
    expect(() => loadPolicyFile(write('intent.yaml', badIntent), ['prod'])).toThrow(/unknown intent "make-coffee"/);
    const badChannel = valid.replace('C0INCIDENT', 'incident');
    expect(() => loadPolicyFile(write('channel.yaml', badChannel), ['prod'])).toThrow(PolicyFileError);
  });

  it('refuses a cluster the stack does not deploy', () => {
    expect(() => loadPolicyFile(write('cluster.yaml', valid), ['staging'])).toThrow(
      /names cluster\(s\) prod, but the stack deploys staging/,
    );
  });
});
