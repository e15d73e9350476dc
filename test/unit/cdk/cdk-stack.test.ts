import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { SERVICE_NAME } from '../../../cdk/calmops-stack.js';
import { placeholdersIn } from '../../../cdk/constructs/workflow-machines.js';
import { POLICY_MAX_AGE_SECONDS } from '../../../src/policy/policy-source.js';
import { TABLE_DEFINITION } from '../../../src/store/table.js';
import { PROJECT_ROOT, synthesize } from '../../support/cdk-support.js';

type Json = Record<string, unknown>;
interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

const base = synthesize({ clusters: 'prod,staging' });
const resources = base.template.toJSON().Resources as Record<string, { Type: string; Properties: Json }>;

function logicalId(prefix: string, type: string): string {
  const ids = Object.keys(resources).filter((id) => id.startsWith(prefix) && resources[id]!.Type === type);
  if (ids.length !== 1) throw new Error(`expected one ${type} named ${prefix}*, found ${ids.join(', ') || 'none'}`);
  return ids[0]!;
}

/** Every statement in the policies attached to a function's role, plus its managed policies. */
function roleStatements(fnPrefix: string): { statements: Statement[]; managed: unknown[] } {
  const roleId = logicalId(`${fnPrefix}Role`, 'AWS::IAM::Role');
  const statements: Statement[] = [];
  for (const resource of Object.values(resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const roles = resource.Properties['Roles'] as { Ref: string }[];
    if (!roles.some((r) => r.Ref === roleId)) continue;
    statements.push(...((resource.Properties['PolicyDocument'] as { Statement: Statement[] }).Statement ?? []));
  }
  return { statements, managed: (resources[roleId]!.Properties['ManagedPolicyArns'] as unknown[]) ?? [] };
}

const actionsOf = (statements: Statement[]) => statements.flatMap((s) => [s.Action].flat());
const text = (value: unknown) => JSON.stringify(value);

describe('functions', () => {
  const functions = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');

  it('run Node 24 on ARM64 with X-Ray, source maps and Powertools settings', () => {
    expect(functions).toHaveLength(4);
    for (const [, fn] of functions) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
        Environment: {
          Variables: {
            NODE_OPTIONS: '--enable-source-maps',
            POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
            POWERTOOLS_METRICS_NAMESPACE: 'calmops',
          },
        },
      });
    }
  });

  it('carry the Parameters and Secrets extension, caching the policy for a minute and the secrets for five', () => {
    const mappings = base.template.toJSON().Mappings as Record<string, Record<string, Record<string, string>>>;
    for (const [id, fn] of functions) {
      const layers = fn.Properties['Layers'] as { 'Fn::FindInMap': [string, unknown, string] }[];
      expect(layers, id).toHaveLength(1);
      const [map, , key] = layers[0]!['Fn::FindInMap'];
      expect(key).toBe('1x0x103xarm64');
      expect(mappings[map]?.['eu-west-1']?.[key]).toMatch(
        /^arn:aws:lambda:eu-west-1:\d{12}:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:\d+$/,
      );
      const env = (fn.Properties['Environment'] as { Variables: Json }).Variables;
      expect(env, id).toMatchObject({
        PARAMETERS_SECRETS_EXTENSION_CACHE_ENABLED: 'true',
        PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: '2773',
        SSM_PARAMETER_STORE_TTL: String(POLICY_MAX_AGE_SECONDS),
        SECRETS_MANAGER_TTL: '300',
        SSM_PARAMETER_STORE_TIMEOUT_MILLIS: '2000',
        SECRETS_MANAGER_TIMEOUT_MILLIS: '2000',
      });
      // The functions find the extension at its own port variable; no endpoint is configured in AWS.
      expect(env['CALMOPS_PARAMETERS_SECRETS_ENDPOINT'], id).toBeUndefined();
    }
    expect(POLICY_MAX_AGE_SECONDS).toBe(60);
  });

  it('log to their own log groups with the configured retention', () => {
    for (const [, fn] of functions) {
      const ref = (fn.Properties['LoggingConfig'] as { LogGroup: { Ref: string } }).LogGroup.Ref;
      expect(resources[ref]).toMatchObject({ Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 30 } });
    }
    const custom = synthesize({ logRetentionDays: '90' }).template;
    custom.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
  });

  it('give the workflow and the reader the bundled templates folder', () => {
    for (const name of ['WorkflowFunction', 'ClusterReaderFunction']) {
      const fn = resources[logicalId(name, 'AWS::Lambda::Function')]!;
      expect(text(fn.Properties['Environment'])).toContain('"CALMOPS_TEMPLATES_DIR":"/var/task/templates"');
    }
  });

  it('pass the session settings to the functions that need them, and only the clusters to the reader', () => {
    const env = (name: string) =>
      (resources[logicalId(name, 'AWS::Lambda::Function')]!.Properties['Environment'] as { Variables: Json }).Variables;
    for (const name of ['SlackFunction', 'WorkflowFunction', 'NotifierFunction']) {
      expect(Object.keys(env(name))).toEqual(
        expect.arrayContaining([
          'CALMOPS_TABLE',
          'CALMOPS_DIAGNOSTIC_SM_ARN',
          'CALMOPS_REVIEW_SM_ARN',
          'CALMOPS_BREAK_GLASS_SM_ARN',
          'CALMOPS_SLACK_SECRET_ARN',
          'CALMOPS_IDLE_TIMEOUT_SECONDS',
          'CALMOPS_APPROVAL_TIMEOUT_SECONDS',
        ]),
      );
      expect(env(name)['CALMOPS_IDLE_TIMEOUT_SECONDS']).toBe('14400');
      expect(env(name)['CALMOPS_APPROVAL_TIMEOUT_SECONDS']).toBe('3600');
      // Only the reader needs to know where the kubeconfigs are.
      expect(env(name)['CALMOPS_CLUSTERS']).toBeUndefined();
    }
    const reader = env('ClusterReaderFunction');
    expect(
      Object.keys(reader)
        .filter((k) => k.startsWith('CALMOPS_'))
        .sort(),
    ).toEqual(['CALMOPS_CLUSTERS', 'CALMOPS_TEMPLATES_DIR']);
    const clusters = text(reader['CALMOPS_CLUSTERS']);
    expect(clusters).toContain('\\"prod\\":{\\"kubeconfigSecretArn\\":\\"');
    expect(clusters).toContain(logicalId('Kubeconfigprod', 'AWS::SecretsManager::Secret'));
    expect(clusters).toContain(logicalId('Kubeconfigstaging', 'AWS::SecretsManager::Secret'));
  });

  it('tell the functions the state machines by the names the machines really have', () => {
    const slackEnv = text(resources[logicalId('SlackFunction', 'AWS::Lambda::Function')]!.Properties['Environment']);
    for (const machine of ['diagnostic', 'review', 'break-glass']) {
      expect(slackEnv).toContain(`:stateMachine:calmops-${machine}`);
    }
    const names = Object.values(resources)
      .filter((r) => r.Type === 'AWS::StepFunctions::StateMachine')
      .map((r) => r.Properties['StateMachineName'])
      .sort();
    expect(names).toEqual(['calmops-break-glass', 'calmops-diagnostic', 'calmops-review']);
  });

  it('name the SSM parameter that holds a validated policy, instead of carrying it', () => {
    const policy = JSON.stringify({ default: { triage: ['*'] } });
    const { template } = synthesize({}, policy);
    template.hasResourceProperties('AWS::SSM::Parameter', { Name: '/calmops/policy', Value: policy });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ CALMOPS_POLICY_PARAMETER: Match.anyValue() }) },
    });
    expect(text(template.toJSON())).not.toContain('CALMOPS_POLICY_JSON');
    expect(text(resources)).not.toContain('CALMOPS_POLICY_PARAMETER');
  });

  it('hold policies past Lambda’s 4 KB of environment, and refuse one no parameter could hold', () => {
    const large = JSON.stringify({ channels: 'x'.repeat(6000) });
    synthesize({}, large).template.hasResourceProperties('AWS::SSM::Parameter', { Tier: 'Intelligent-Tiering' });
    const huge = JSON.stringify({ channels: 'x'.repeat(9000) });
    expect(() => synthesize({}, huge)).toThrow(/\d+ bytes as JSON; an SSM parameter holds at most 8192/);
  });
});

describe('least privilege', () => {
  const kubeconfigSecrets = [
    logicalId('Kubeconfigprod', 'AWS::SecretsManager::Secret'),
    logicalId('Kubeconfigstaging', 'AWS::SecretsManager::Secret'),
  ];

  it('function roles carry no managed policies', () => {
    for (const fn of ['SlackFunction', 'WorkflowFunction', 'NotifierFunction', 'ClusterReaderFunction']) {
      expect(roleStatements(fn).managed).toEqual([]);
    }
  });

  it('the Slack function has no wildcard action and never reaches a cluster', () => {
    const { statements } = roleStatements('SlackFunction');
    const actions = actionsOf(statements);
    expect(actions.filter((a) => a.includes('*'))).toEqual([]);
    expect(actions).toEqual(
      expect.arrayContaining([
        'states:StartExecution',
        'states:SendTaskSuccess',
        'states:DescribeExecution',
        'dynamodb:PutItem',
        'secretsmanager:GetSecretValue',
      ]),
    );
    expect(actions.some((a) => a.startsWith('lambda:'))).toBe(false);
    for (const id of kubeconfigSecrets) expect(text(statements)).not.toContain(id);
  });

  it('the cluster reader can read its kubeconfig secrets and nothing else in AWS', () => {
    const { statements } = roleStatements('ClusterReaderFunction');
    const actions = actionsOf(statements);
    expect(actions.some((a) => a.startsWith('dynamodb:'))).toBe(false);
    expect(actions.some((a) => a.startsWith('states:'))).toBe(false);
    expect(actions.some((a) => a.startsWith('kms:'))).toBe(false);
    expect([...new Set(actions)].sort()).toEqual([
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'secretsmanager:GetSecretValue',
      'xray:PutTelemetryRecords',
      'xray:PutTraceSegments',
    ]);
    const secretResources = statements
      .filter((s) => [s.Action].flat().some((a) => a.startsWith('secretsmanager:')))
      .map((s) => text(s.Resource));
    expect(secretResources.sort()).toEqual(kubeconfigSecrets.map((id) => text({ Ref: id })).sort());
    expect(text(statements)).not.toContain(logicalId('SlackSecret', 'AWS::SecretsManager::Secret'));
  });

  it('workflow and notifier get the table, the Slack secret and task callbacks, not the kubeconfigs', () => {
    for (const fn of ['WorkflowFunction', 'NotifierFunction']) {
      const { statements } = roleStatements(fn);
      const actions = actionsOf(statements);
      expect(actions).toEqual(expect.arrayContaining(['dynamodb:UpdateItem', 'states:SendTaskSuccess']));
      expect(actions.filter((a) => a.includes('*'))).toEqual([]);
      for (const id of kubeconfigSecrets) expect(text(statements)).not.toContain(id);
    }
  });

  it('functions start the diagnostic machine (sessions and resumes); only the reconciler also starts a review', () => {
    for (const fn of ['SlackFunction', 'WorkflowFunction']) {
      const starts = roleStatements(fn).statements.filter((s) => [s.Action].flat().includes('states:StartExecution'));
      expect(starts.map((s) => text(s.Resource))).toEqual([
        expect.stringContaining(':stateMachine:calmops-diagnostic"'),
        ...(fn === 'WorkflowFunction' ? [expect.stringContaining(':stateMachine:calmops-review"')] : []),
      ]);
      const describe = roleStatements(fn).statements.find((s) =>
        [s.Action].flat().includes('states:DescribeExecution'),
      );
      expect(text(describe!.Resource)).toContain(':execution:calmops-diagnostic:*');
    }
    const notifier = actionsOf(roleStatements('NotifierFunction').statements);
    expect(notifier).not.toContain('states:StartExecution');
    expect(notifier).not.toContain('states:DescribeExecution');
  });

  it('runs the reconciler every minute on the workflow function, which may ask whether a task still waits', () => {
    const schedules = Object.values(resources).filter((r) => r.Type === 'AWS::Scheduler::Schedule');
    expect(schedules).toHaveLength(1);
    const props = schedules[0]!.Properties as { ScheduleExpression: string; Target: { Arn: unknown; Input: string } };
    expect(props.ScheduleExpression).toBe('rate(1 minute)');
    expect(text(props.Target.Arn)).toContain('WorkflowFunction');
    expect(JSON.parse(props.Target.Input)).toEqual({ step: 'reconcile' });
    expect(actionsOf(roleStatements('WorkflowFunction').statements)).toContain('states:SendTaskHeartbeat');
    expect(actionsOf(roleStatements('SlackFunction').statements)).not.toContain('states:SendTaskHeartbeat');
  });

  it('no table grant includes Scan or stream reads', () => {
    const all = Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((r) => actionsOf((r.Properties['PolicyDocument'] as { Statement: Statement[] }).Statement));
    expect(all).not.toContain('dynamodb:Scan');
    expect(all).not.toContain('dynamodb:GetRecords');
  });
});

describe('state machines', () => {
  const machines = {
    diagnostic: logicalId('WorkflowDiagnostic', 'AWS::StepFunctions::StateMachine'),
    review: logicalId('WorkflowReview', 'AWS::StepFunctions::StateMachine'),
    'break-glass': logicalId('WorkflowBreakGlass', 'AWS::StepFunctions::StateMachine'),
  };
  const expectedRefs: Record<string, unknown> = {
    ClusterReaderFunctionArn: { 'Fn::GetAtt': [logicalId('ClusterReaderFunction', 'AWS::Lambda::Function'), 'Arn'] },
    WorkflowFunctionArn: { 'Fn::GetAtt': [logicalId('WorkflowFunction', 'AWS::Lambda::Function'), 'Arn'] },
    NotifierFunctionArn: { 'Fn::GetAtt': [logicalId('NotifierFunction', 'AWS::Lambda::Function'), 'Arn'] },
    ReviewStateMachineArn: { Ref: machines.review },
    BreakGlassStateMachineArn: { Ref: machines['break-glass'] },
  };

  for (const [name, id] of Object.entries(machines)) {
    it(`${name}: is the file in statemachines/ with every placeholder substituted`, () => {
      const file = readFileSync(join(PROJECT_ROOT, 'statemachines', `${name}.asl.json`), 'utf8');
      const props = resources[id]!.Properties;
      const key = (props['DefinitionS3Location'] as { Key: string }).Key;
      expect(readFileSync(join(base.outdir, `asset.${key}`), 'utf8')).toBe(file);
      const substitutions = props['DefinitionSubstitutions'] as Json;
      expect(Object.keys(substitutions).sort()).toEqual(placeholdersIn(file));
      for (const [key, value] of Object.entries(substitutions)) expect(value).toEqual(expectedRefs[key]);
      // After substitution, no placeholder is left and the result is still JSON.
      let resolved = file;
      for (const key of Object.keys(substitutions)) resolved = resolved.replaceAll(`\${${key}}`, `arn:${key}`);
      expect(placeholdersIn(resolved)).toEqual([]);
      expect(() => JSON.parse(resolved)).not.toThrow();
    });

    it(`${name}: Standard, logs ALL to a retained log group, traced`, () => {
      const props = resources[id]!.Properties;
      expect(props).toMatchObject({
        StateMachineType: 'STANDARD',
        TracingConfiguration: { Enabled: true },
        LoggingConfiguration: { Level: 'ALL', IncludeExecutionData: false },
      });
      const destination = text(props['LoggingConfiguration']);
      const logGroup = logicalId('WorkflowLogs', 'AWS::Logs::LogGroup');
      expect(destination).toContain(logGroup);
      expect(resources[logGroup]!.Properties['RetentionInDays']).toBe(30);
    });
  }

  it('the diagnostic machine may run the review as a .sync child and start break-glass', () => {
    const policy = Object.values(resources).find(
      (r) =>
        r.Type === 'AWS::IAM::Policy' &&
        text(r.Properties['Roles']).includes(logicalId('WorkflowDiagnosticRole', 'AWS::IAM::Role')),
    )!;
    const statements = (policy.Properties['PolicyDocument'] as { Statement: Statement[] }).Statement;
    const find = (action: string) => statements.find((s) => [s.Action].flat().includes(action));
    expect(find('states:StartExecution')!.Resource).toEqual([
      { Ref: machines.review },
      { Ref: machines['break-glass'] },
    ]);
    expect(text(find('states:DescribeExecution')!.Resource)).toContain(':execution:calmops-review:*');
    expect(find('states:StopExecution')).toBe(find('states:DescribeExecution'));
    expect(text(find('events:PutRule')!.Resource)).toContain(
      ':rule/StepFunctionsGetEventsForStepFunctionsExecutionRule',
    );
    expect([find('events:PutTargets'), find('events:DescribeRule')]).toEqual([
      find('events:PutRule'),
      find('events:PutRule'),
    ]);
  });

  it('break-glass may start the review machine; no machine invokes a function it does not use', () => {
    const policyOf = (roleId: string) =>
      (
        Object.values(resources).find(
          (r) => r.Type === 'AWS::IAM::Policy' && text(r.Properties['Roles']).includes(roleId),
        )!.Properties['PolicyDocument'] as { Statement: Statement[] }
      ).Statement;
    const breakGlass = policyOf(logicalId('WorkflowBreakGlassRole', 'AWS::IAM::Role'));
    expect(breakGlass.find((s) => s.Action === 'states:StartExecution')!.Resource).toEqual({ Ref: machines.review });
    const review = policyOf(logicalId('WorkflowReviewRole', 'AWS::IAM::Role'));
    const invoke = review.find((s) => s.Action === 'lambda:InvokeFunction')!;
    expect(text(invoke.Resource)).not.toContain(logicalId('ClusterReaderFunction', 'AWS::Lambda::Function'));
    expect(text(invoke.Resource)).not.toContain(':*');
  });
});

describe('table', () => {
  it('is built from the shared table definition: on demand, PITR, TTL, encrypted, protected', () => {
    base.template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: TABLE_DEFINITION.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: TABLE_DEFINITION.sortKey.name, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: 'GSI1',
          KeySchema: [
            { AttributeName: 'GSI1PK', KeyType: 'HASH' },
            { AttributeName: 'GSI1SK', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        }),
      ],
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: TABLE_DEFINITION.ttlAttribute, Enabled: true },
      SSESpecification: { SSEEnabled: true },
      DeletionProtectionEnabled: true,
    });
    base.template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain' });
  });

  it('uses a rotated customer-managed key when asked, and drops deletion protection when asked', () => {
    const { template } = synthesize({ tableEncryption: 'customer-managed', tableDeletionProtection: 'false' });
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: Match.anyValue() },
      DeletionProtectionEnabled: false,
    });
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
  });
});

describe('endpoint and secrets', () => {
  it('serves POST /slack/events from an HTTP API with access logs and throttling', () => {
    base.template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'POST /slack/events' });
    base.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
    });
    base.template.hasOutput('SlackRequestUrl', {
      Value: { 'Fn::Join': ['', [Match.anyValue(), '/slack/events']] },
    });
  });

  it('holds the Slack secret, the alert token and one kubeconfig secret per cluster, under the stack name', () => {
    const names = Object.values(resources)
      .filter((r) => r.Type === 'AWS::SecretsManager::Secret')
      .map((r) => r.Properties['Name'])
      .sort();
    expect(names).toEqual([
      'calmops/alerts-token',
      'calmops/kubeconfig/prod',
      'calmops/kubeconfig/staging',
      'calmops/slack',
    ]);
  });
});

describe('alarms', () => {
  const alarms = Object.values(resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
  const metricNames = alarms.map((a) => a.Properties['MetricName']).filter(Boolean);

  it('watch function errors and throttles, failed and timed-out executions, expired approvals, throttling', () => {
    expect(metricNames.filter((m) => m === 'Errors')).toHaveLength(4);
    expect(metricNames.filter((m) => m === 'Throttles')).toHaveLength(4);
    expect(metricNames.filter((m) => m === 'ExecutionsFailed')).toHaveLength(3);
    expect(metricNames.filter((m) => m === 'ExecutionsTimedOut')).toHaveLength(3);
    // Every approval kind the workflow reports (a `kind` dimension) counts.
    base.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: [
        Match.objectLike({
          Expression: `SELECT SUM(ApprovalsExpired) FROM SCHEMA("calmops", kind, service) WHERE service = '${SERVICE_NAME}'`,
          Period: 300,
          ReturnData: true,
        }),
      ],
    });
    // The table alarm sums ThrottledRequests over the store's operations.
    const table = alarms.find((a) => text(a.Properties['Metrics'] ?? null).includes('ThrottledRequests'));
    expect(table).toBeDefined();
    for (const alarm of alarms) {
      expect(alarm.Properties).toMatchObject({ Threshold: 1, TreatMissingData: 'notBreaching' });
    }
  });

  it('notify an encrypted topic when an email address is given, and nothing otherwise', () => {
    expect(alarms.every((a) => a.Properties['AlarmActions'] === undefined)).toBe(true);
    const { template } = synthesize({ alarmEmail: 'oncall@example.com' });
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    template.allResourcesProperties('AWS::CloudWatch::Alarm', { AlarmActions: [{ Ref: Match.anyValue() }] });
  });
});

describe('dependencies', () => {
  it('synthesize without warnings or errors', () => {
    const { stack } = synthesize({ alarmEmail: 'oncall@example.com', tableEncryption: 'customer-managed' });
    expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
    expect(Annotations.fromStack(stack).findError('*', Match.anyValue())).toEqual([]);
  });

  it('form no cycle (functions learn machine ARNs by name, not by reference)', () => {
    const edges = new Map<string, Set<string>>();
    const collect = (value: unknown, into: Set<string>) => {
      if (Array.isArray(value)) for (const v of value) collect(v, into);
      else if (value !== null && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) {
          if (k === 'Ref' && typeof v === 'string' && v in resources) into.add(v);
          else if (k === 'Fn::GetAtt' && Array.isArray(v)) into.add(v[0] as string);
          else collect(v, into);
        }
      }
    };
    const raw = base.template.toJSON().Resources as Record<string, Json>;
    for (const [id, resource] of Object.entries(raw)) {
      const into = new Set<string>([resource['DependsOn'] ?? []].flat() as string[]);
      collect(resource['Properties'], into);
      edges.set(id, into);
    }
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (id: string, path: string[]): void => {
      if (state.get(id) === 'done') return;
      if (state.get(id) === 'visiting') throw new Error(`cycle: ${[...path, id].join(' -> ')}`);
      state.set(id, 'visiting');
      for (const next of edges.get(id) ?? []) visit(next, [...path, id]);
      state.set(id, 'done');
    };
    for (const id of edges.keys()) visit(id, []);
  });
});
