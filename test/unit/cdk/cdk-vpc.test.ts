import { describe, expect, it } from 'vitest';
import { parseSettings } from '../../../cdk/settings.js';
import { synthesize } from '../../support/cdk-support.js';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] }>;

const VPC = 'vpc-0123456789abcdef0';
const SUBNETS = ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'];
const GROUP = 'sg-0123456789abcdef0';

function functions(resources: Resources) {
  return Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
}
const named = (resources: Resources, prefix: string) =>
  functions(resources).find(([id]) => id.startsWith(prefix))?.[1] as Resources[string];
const endpointServices = (resources: Resources) =>
  Object.values(resources)
    .filter((r) => r.Type === 'AWS::EC2::VPCEndpoint')
    .map((r) => JSON.stringify(r.Properties['ServiceName']).match(/\.(secretsmanager|sts|logs)"/)?.[1])
    .sort();

describe('the cluster reader in a VPC', () => {
  const { template } = synthesize({ vpcId: VPC, subnetIds: SUBNETS.join(',') });
  const resources = template.toJSON().Resources as Resources;

  it('runs the reader, and only the reader, in the given subnets', () => {
    const reader = named(resources, 'ClusterReaderFunction');
    expect(reader.Properties['VpcConfig']).toMatchObject({ SubnetIds: SUBNETS });
    for (const name of ['SlackFunction', 'WorkflowFunction', 'NotifierFunction']) {
      expect(named(resources, name).Properties['VpcConfig']).toBeUndefined();
    }
  });

  it('gives it a security group of its own when none is named, and says which', () => {
    const reader = named(resources, 'ClusterReaderFunction');
    const groups = (reader.Properties['VpcConfig'] as { SecurityGroupIds: { 'Fn::GetAtt': [string, string] }[] })
      .SecurityGroupIds;
    expect(groups).toHaveLength(1);
    expect(resources[groups[0]!['Fn::GetAtt'][0]]).toMatchObject({
      Type: 'AWS::EC2::SecurityGroup',
      Properties: { VpcId: VPC },
    });
    template.hasOutput('ClusterReaderSecurityGroupIds', {});
  });

  it('lets Lambda attach it: the network interface actions, and the function waits for them', () => {
    const policiesOf = (role: string) =>
      Object.entries(resources).filter(
        ([, r]) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties['Roles']).includes(`"${role}Role`),
      );
    const actionsOf = (role: string) =>
      policiesOf(role).flatMap(([, r]) =>
        (r.Properties['PolicyDocument'] as { Statement: { Action: string | string[] }[] }).Statement.flatMap((s) =>
          [s.Action].flat(),
        ),
      );
    expect(actionsOf('ClusterReaderFunction')).toEqual(
      expect.arrayContaining(['ec2:CreateNetworkInterface', 'ec2:DeleteNetworkInterface']),
    );
    const depends = named(resources, 'ClusterReaderFunction').DependsOn ?? [];
    expect(policiesOf('ClusterReaderFunction').some(([id]) => depends.includes(id))).toBe(true);
    for (const name of ['SlackFunction', 'WorkflowFunction', 'NotifierFunction']) {
      expect(actionsOf(name).length).toBeGreaterThan(0);
      expect(actionsOf(name).filter((a) => a.startsWith('ec2:'))).toEqual([]);
    }
  });

  it('adds a private Secrets Manager endpoint that admits HTTPS from the reader only', () => {
    expect(endpointServices(resources)).toEqual(['secretsmanager']);
    template.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      VpcId: VPC,
      VpcEndpointType: 'Interface',
      PrivateDnsEnabled: true,
      SubnetIds: SUBNETS,
    });
    const ingress = Object.values(resources).filter((r) => r.Type === 'AWS::EC2::SecurityGroupIngress');
    expect(ingress).toHaveLength(1);
    expect(ingress[0]!.Properties).toMatchObject({
      IpProtocol: 'tcp',
      FromPort: 443,
      ToPort: 443,
      SourceSecurityGroupId: expect.anything(),
    });
    expect(JSON.stringify(ingress)).not.toContain('CidrIp');
  });

  it('uses named security groups without changing them, and adds STS and Logs endpoints on request', () => {
    const custom = synthesize({
      vpcId: VPC,
      subnetIds: SUBNETS,
      securityGroupIds: GROUP,
      vpcEndpoints: 'secretsmanager,sts,logs',
    });
    const res = custom.template.toJSON().Resources as Resources;
    expect(named(res, 'ClusterReaderFunction').Properties['VpcConfig']).toMatchObject({ SecurityGroupIds: [GROUP] });
    expect(endpointServices(res)).toEqual(['logs', 'secretsmanager', 'sts']);
    const ingress = Object.values(res).filter((r) => r.Type === 'AWS::EC2::SecurityGroupIngress');
    expect(ingress.map((r) => r.Properties['SourceSecurityGroupId'])).toEqual([GROUP]);
    expect(Object.values(res).filter((r) => r.Type === 'AWS::EC2::SecurityGroupEgress')).toEqual([]);
  });

  it('adds no endpoint when the VPC has them already', () => {
    const res = synthesize({ vpcId: VPC, subnetIds: SUBNETS, vpcEndpoints: 'none' }).template.toJSON()
      .Resources as Resources;
    expect(endpointServices(res)).toEqual([]);
    expect(named(res, 'ClusterReaderFunction').Properties['VpcConfig']).toBeDefined();
  });

  it('leaves every function outside any VPC when no VPC is set', () => {
    const res = synthesize({}).template.toJSON().Resources as Resources;
    for (const [, fn] of functions(res)) expect(fn.Properties['VpcConfig']).toBeUndefined();
    expect(Object.values(res).some((r) => r.Type.startsWith('AWS::EC2::'))).toBe(false);
  });
});

describe('VPC settings', () => {
  const settings = (context: Record<string, unknown>) => parseSettings((key) => context[key]);

  it('need their VPC and its subnets, and name the context key of a bad id', () => {
    expect(() => settings({ vpcId: VPC })).toThrow(/context subnetIds: required with vpcId/);
    expect(() => settings({ subnetIds: SUBNETS })).toThrow(/context subnetIds: only takes effect with vpcId/);
    expect(() => settings({ vpcId: 'vpc-1', subnetIds: SUBNETS })).toThrow(/context vpcId: must be a VPC id/);
    expect(() => settings({ vpcId: VPC, subnetIds: 'subnet-0123456789abcdef0,subnet-nope' })).toThrow(
      /context subnetIds\.1: must be subnet ids/,
    );
    expect(() => settings({ vpcId: VPC, subnetIds: SUBNETS, vpcEndpoints: 's3' })).toThrow(/context vpcEndpoints/);
  });

  it('read lists from the command line and cdk.json alike', () => {
    const fromCli = settings({ vpcId: VPC, subnetIds: ` ${SUBNETS.join(' , ')} `, vpcEndpoints: 'sts,secretsmanager' });
    const fromJson = settings({ vpcId: VPC, subnetIds: SUBNETS, vpcEndpoints: ['sts', 'secretsmanager'] });
    expect(fromCli).toEqual(fromJson);
    expect(settings({ vpcId: VPC, subnetIds: SUBNETS, vpcEndpoints: 'none' }).vpcEndpoints).toEqual([]);
  });
});

describe('the policy parameter', () => {
  it('is readable by the functions that judge Slack requests, never by the cluster reader', () => {
    const { template } = synthesize({}, JSON.stringify({ defaults: {} }));
    const resources = template.toJSON().Resources as Resources;
    const readers = Object.values(resources)
      .filter(
        (r) =>
          r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties['PolicyDocument']).includes('ssm:GetParameter'),
      )
      .map((r) => JSON.stringify(r.Properties['Roles']).match(/"(\w+?)Role/)?.[1])
      .sort();
    expect(readers).toEqual(['NotifierFunction', 'SlackFunction', 'WorkflowFunction']);
    template.hasOutput('PolicyParameterName', {});
  });
});
