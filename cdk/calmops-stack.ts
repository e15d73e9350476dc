import { join } from 'node:path';
import {
  Annotations,
  type CfnElement,
  CfnOutput,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { type AttributeType, BillingMode, type ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import {
  InterfaceVpcEndpoint,
  InterfaceVpcEndpointAwsService,
  type ISecurityGroup,
  type IVpc,
  Port,
  SecurityGroup,
  Subnet,
  type SubnetSelection,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Schedule, ScheduleExpression, ScheduleTargetInput } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { ParameterTier, StringParameter } from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';
import { TABLE_DEFINITION } from '../src/store/table.js';
import { CalmopsAlarms } from './constructs/alarms.js';
import { CalmopsFunction } from './constructs/calmops-function.js';
import { executionsArn, machineArn, WorkflowMachines } from './constructs/workflow-machines.js';
import { DEFAULT_VPC_ENDPOINTS, type Settings, type VpcEndpointService } from './settings.js';
import { DELETE, QUERY, TABLE_ACCESS } from './table-access.js';

/**
 * calmops in one stack: the table, the four functions with only the permissions their steps use, the three state
 * machines, the Slack endpoint, the secrets and the alarms.
 */

export const FUNCTION_ENTRIES = {
  slack: 'functions/slack.ts',
  workflow: 'functions/workflow.ts',
  notifier: 'functions/notifier.ts',
  clusterReader: 'functions/cluster-reader.ts',
} as const;
export type FunctionName = keyof typeof FUNCTION_ENTRIES;

/** Shipped in the cluster-reader bundle: the EKS token helper a kubeconfig's exec plugin runs (see docs/deploy.md). */
export const EKS_TOKEN_SCRIPT = 'cdk/kubernetes/eks-token.mjs';

export { TABLE_ACCESS } from './table-access.js';

export const NO_ALARM_DESTINATION_WARNING =
  'No alarm destination is configured (context alarmEmail or alarmTopicArn): the alarms are created but notify ' +
  'nobody. Deploy with -c alarmEmail=<address> or -c alarmTopicArn=<topic ARN> (docs/deploy.md).';

/** Lambda rejects a function whose environment variables exceed 4 KB in total. */
const LAMBDA_ENV_LIMIT = 4096;

/** The largest SSM parameter value (advanced tier; the intelligent tier picks standard up to 4 KB). */
export const POLICY_PARAMETER_LIMIT = 8192;

/** The interface endpoint each VPC endpoint setting stands for. */
const ENDPOINT_SERVICES: Record<VpcEndpointService, InterfaceVpcEndpointAwsService> = {
  secretsmanager: InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
  sts: InterfaceVpcEndpointAwsService.STS,
  logs: InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS,
};

/** Where the cluster reader runs when it is attached to a VPC (context vpcId, subnetIds, securityGroupIds). */
interface ReaderNetwork {
  vpc: IVpc;
  subnets: SubnetSelection;
  securityGroups?: ISecurityGroup[];
}

export const SERVICE_NAME = 'calmops';

export interface CalmopsStackProps extends StackProps {
  settings: Settings;
  /**
   * The validated channel policy as JSON (see cdk/policy.ts), stored in an SSM parameter the functions read; undefined
   * for none (every channel is then refused until one is deployed).
   */
  policyJson?: string;
  /** The repository root (package.json, templates/, statemachines/). */
  projectRoot: string;
  /** Where the function entry files live; defaults to `<projectRoot>/functions`. */
  functionsDir?: string;
}

export class CalmopsStack extends Stack {
  readonly table: Table;
  readonly functions: Record<FunctionName, CalmopsFunction>;
  readonly machines: WorkflowMachines;
  readonly slackSecret: Secret;
  readonly kubeconfigSecrets: Record<string, Secret>;
  readonly api: HttpApi;
  readonly alarms: CalmopsAlarms;
  readonly policyParameter: StringParameter | undefined;

  constructor(scope: Construct, id: string, props: CalmopsStackProps) {
    super(scope, id, props);
    const { settings, projectRoot } = props;
    const functionsDir = props.functionsDir ?? join(projectRoot, 'functions');
    const prefix = this.stackName;

    this.table = this.buildTable(settings);

    this.slackSecret = new Secret(this, 'SlackSecret', {
      secretName: `${prefix}/slack`,
      description: 'calmops Slack credentials: {"signingSecret": "...", "botToken": "xoxb-..."}',
    });
    this.kubeconfigSecrets = Object.fromEntries(
      settings.clusters.map((cluster) => [
        cluster,
        new Secret(this, `Kubeconfig-${cluster}`, {
          secretName: `${prefix}/kubeconfig/${cluster}`,
          description: `calmops read-only kubeconfig (YAML) for cluster ${cluster}`,
        }),
      ]),
    );

    const clustersJson = JSON.stringify(
      Object.fromEntries(
        Object.entries(this.kubeconfigSecrets).map(([name, secret]) => [
          name,
          { kubeconfigSecretArn: secret.secretArn },
        ]),
      ),
    );
    this.policyParameter = this.storePolicy(prefix, props.policyJson);
    const readerNetwork = this.readerNetwork(settings);
    const smArns = {
      CALMOPS_DIAGNOSTIC_SM_ARN: machineArn(this, prefix, 'diagnostic'),
      CALMOPS_REVIEW_SM_ARN: machineArn(this, prefix, 'review'),
      CALMOPS_BREAK_GLASS_SM_ARN: machineArn(this, prefix, 'break-glass'),
    };
    const sessionEnv: Record<string, string> = {
      CALMOPS_TABLE: this.table.tableName,
      ...smArns,
      CALMOPS_SLACK_SECRET_ARN: this.slackSecret.secretArn,
      CALMOPS_IDLE_TIMEOUT_SECONDS: String(settings.idleTimeoutSeconds),
      CALMOPS_APPROVAL_TIMEOUT_SECONDS: String(settings.approvalTimeoutSeconds),
      ...(this.policyParameter === undefined ? {} : { CALMOPS_POLICY_PARAMETER: this.policyParameter.parameterName }),
    };

    const common = { projectRoot, logRetention: settings.logRetentionDays, serviceName: SERVICE_NAME };
    const entry = (name: FunctionName) => join(functionsDir, FUNCTION_ENTRIES[name].replace(/^functions\//, ''));
    this.functions = {
      slack: new CalmopsFunction(this, 'SlackFunction', {
        ...common,
        entry: entry('slack'),
        description: 'calmops Slack endpoint: verifies, records, starts or feeds sessions, acknowledges within 3 s',
        // Slack gives up after 3 s; anything slower is a failure anyway.
        timeout: Duration.seconds(10),
        memorySize: 1024,
        environment: sessionEnv,
      }),
      workflow: new CalmopsFunction(this, 'WorkflowFunction', {
        ...common,
        entry: entry('workflow'),
        description: 'calmops workflow steps: analysis, gating, plans, reviews, memory',
        // Under the shortest Task timeout that invokes it (30 s), so Step Functions sees the function's own error.
        timeout: Duration.seconds(25),
        environment: sessionEnv,
        withTemplates: true,
      }),
      notifier: new CalmopsFunction(this, 'NotifierFunction', {
        ...common,
        entry: entry('notifier'),
        description: 'calmops approvals and waits: posts buttons, stores task tokens',
        timeout: Duration.seconds(25),
        environment: sessionEnv,
      }),
      clusterReader: new CalmopsFunction(this, 'ClusterReaderFunction', {
        ...common,
        entry: entry('clusterReader'),
        description: 'calmops read-only cluster reads with the kubeconfig secrets; no other AWS access',
        timeout: Duration.seconds(25),
        memorySize: 1024,
        environment: { CALMOPS_CLUSTERS: clustersJson },
        withTemplates: true,
        extraFiles: [EKS_TOKEN_SCRIPT],
        ...(readerNetwork === undefined ? {} : { vpc: readerNetwork }),
      }),
    };
    if (readerNetwork !== undefined) this.connectReader(readerNetwork, settings);
    checkEnvironmentSize('session', sessionEnv);

    this.machines = new WorkflowMachines(this, 'Workflow', {
      definitionsDir: join(projectRoot, 'statemachines'),
      namePrefix: prefix,
      clusterReader: this.functions.clusterReader,
      workflow: this.functions.workflow,
      notifier: this.functions.notifier,
      logRetention: settings.logRetentionDays,
    });

    this.grantPermissions(prefix);
    for (const fn of [this.functions.slack, this.functions.workflow, this.functions.notifier]) {
      this.policyParameter?.grantRead(fn);
    }
    this.scheduleReconciler();
    this.api = this.buildEndpoint(settings);
    this.alarms = new CalmopsAlarms(this, 'Alarms', {
      functions: this.functions,
      machines: this.machines.all(),
      table: this.table,
      api: this.api,
      serviceName: SERVICE_NAME,
      actions: this.alarmActions(settings),
    });
    this.acknowledgeChecks();
    this.outputs(settings);
  }

  /**
   * The channel policy lives in an SSM parameter, read through Powertools Parameters and cached for a minute: an
   * edited policy (`aws ssm put-parameter --overwrite`) is in force without a redeploy, and it is not bounded by
   * Lambda's 4 KB of environment variables. Each deploy writes the policy file again, so the file stays the source.
   */
  private storePolicy(prefix: string, policyJson: string | undefined): StringParameter | undefined {
    if (policyJson === undefined) return undefined;
    const bytes = Buffer.byteLength(policyJson);
    if (bytes > POLICY_PARAMETER_LIMIT) {
      throw new PolicyTooLargeError(
        `The channel policy is ${bytes} bytes as JSON; an SSM parameter holds at most ${POLICY_PARAMETER_LIMIT}. ` +
          'Move shared rules into defaults, or split the channels across stacks.',
      );
    }
    return new StringParameter(this, 'PolicyParameter', {
      parameterName: `/${prefix}/policy`,
      description:
        'calmops channel policy (JSON or YAML, see docs/policy.md); the functions re-read it within a minute',
      stringValue: policyJson,
      // Standard (free) while the policy fits in 4 KB, advanced above.
      tier: ParameterTier.INTELLIGENT_TIERING,
    });
  }

  /**
   * The cluster reader in the user's VPC, for API servers with private endpoints. Nothing is looked up (synth
   * stays offline): the VPC, subnets and security groups are referenced by id.
   */
  private readerNetwork(settings: Settings): ReaderNetwork | undefined {
    if (settings.vpcId === undefined) return undefined;
    // The subnets are given one by one below; the VPC's own subnet lists (and so its zones) are never consulted.
    const vpc = Vpc.fromVpcAttributes(this, 'ReaderVpc', {
      vpcId: settings.vpcId,
      availabilityZones: this.availabilityZones,
    });
    const subnets = (settings.subnetIds ?? []).map((id) => Subnet.fromSubnetId(this, `ReaderSubnet-${id}`, id));
    // Imported immutable: the stack adds no rules to groups it does not own.
    const securityGroups = settings.securityGroupIds?.map((id) =>
      SecurityGroup.fromSecurityGroupId(this, `ReaderSecurityGroup-${id}`, id, { mutable: false }),
    );
    return { vpc, subnets: { subnets }, ...(securityGroups === undefined ? {} : { securityGroups }) };
  }

  /**
   * What the reader needs once it is in a VPC: the permissions Lambda uses to attach it (network interfaces have no
   * resource-level scope before they exist), and interface endpoints for the AWS APIs it calls, since a private
   * subnet may have no route to them. Each endpoint admits HTTPS from the reader's security groups only.
   */
  private connectReader(network: ReaderNetwork, settings: Settings): void {
    const reader = this.functions.clusterReader;
    reader.addToRolePolicy(
      new PolicyStatement({
        actions: [
          'ec2:CreateNetworkInterface',
          'ec2:DescribeNetworkInterfaces',
          'ec2:DescribeSubnets',
          'ec2:DeleteNetworkInterface',
          'ec2:AssignPrivateIpAddresses',
          'ec2:UnassignPrivateIpAddresses',
        ],
        resources: ['*'],
      }),
    );
    const services = settings.vpcEndpoints ?? DEFAULT_VPC_ENDPOINTS;
    if (services.length === 0) return;
    const endpointGroup = new SecurityGroup(this, 'ReaderEndpointSecurityGroup', {
      vpc: network.vpc,
      description: 'calmops interface endpoints: HTTPS from the cluster reader only',
      allowAllOutbound: false,
    });
    endpointGroup.connections.allowFrom(reader, Port.tcp(443), 'HTTPS from the calmops cluster reader');
    for (const service of services) {
      new InterfaceVpcEndpoint(this, `ReaderEndpoint-${service}`, {
        vpc: network.vpc,
        service: ENDPOINT_SERVICES[service],
        subnets: network.subnets,
        securityGroups: [endpointGroup],
        open: false,
        privateDnsEnabled: true,
      });
    }
  }

  private buildTable(settings: Settings): Table {
    const def = TABLE_DEFINITION;
    const key = (k: { name: string; type: 'S' | 'N' | 'B' }) => ({ name: k.name, type: k.type as AttributeType });
    const table = new Table(this, 'Table', {
      partitionKey: key(def.partitionKey),
      sortKey: key(def.sortKey),
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: def.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: settings.tableDeletionProtection,
      removalPolicy: RemovalPolicy.RETAIN,
      ...(settings.tableEncryption === 'customer-managed'
        ? {
            encryption: TableEncryption.CUSTOMER_MANAGED,
            encryptionKey: new Key(this, 'TableKey', {
              description: 'calmops table encryption',
              enableKeyRotation: true,
              removalPolicy: RemovalPolicy.RETAIN,
            }),
          }
        : { encryption: TableEncryption.AWS_MANAGED }),
    });
    for (const gsi of def.globalSecondaryIndexes) {
      table.addGlobalSecondaryIndex({
        indexName: gsi.indexName,
        partitionKey: key(gsi.partitionKey),
        sortKey: key(gsi.sortKey),
        projectionType: gsi.projectionType as ProjectionType,
      });
    }
    return table;
  }

  /**
   * Every minute the workflow function repairs what lost or failed runs left behind (src/workflow/reconcile.ts):
   * resumes sessions whose execution is gone, hands over stranded input, withdraws approvals nobody waits on and
   * revokes overrides past their deadline. A revoke is therefore never later than the deadline plus one period.
   */
  private scheduleReconciler(): void {
    const workflow = this.functions.workflow;
    const role = new Role(this, 'ReconcileScheduleRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com'),
      description: 'EventBridge Scheduler invokes the calmops reconciler (the workflow function) and nothing else',
    });
    new Schedule(this, 'ReconcileSchedule', {
      description: 'calmops reconciler: repair sessions, inboxes, approvals and overrides left by lost runs',
      schedule: ScheduleExpression.rate(Duration.minutes(1)),
      // A missed run is not retried: the next one, a minute later, repeats every check anyway.
      target: new LambdaInvoke(workflow, {
        role,
        input: ScheduleTargetInput.fromObject({ step: 'reconcile' }),
        retryAttempts: 0,
      }),
    });
    const logicalId = this.getLogicalId(workflow.node.defaultChild as CfnElement);
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>:*]`,
      reason: 'The scheduler target grant covers the workflow function and its versions; it invokes nothing else.',
    });
  }

  private grantPermissions(prefix: string): void {
    const { slack, workflow, notifier, clusterReader } = this.functions;

    for (const [name, fn] of [
      ['slack', slack],
      ['workflow', workflow],
      ['notifier', notifier],
    ] as const) {
      this.grantTable(fn, TABLE_ACCESS[name]);
      this.table.encryptionKey?.grantEncryptDecrypt(fn);
      this.slackSecret.grantRead(fn);
    }

    // Slack starts sessions; Slack (a new thread message) and workflow (the idle step, for a message that arrived
    // as the execution ended) resume them, asking first whether the session's execution still runs.
    for (const fn of [slack, workflow]) {
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: ['states:StartExecution'],
          resources: [machineArn(this, prefix, 'diagnostic')],
        }),
      );
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: ['states:DescribeExecution'],
          resources: [executionsArn(this, prefix, 'diagnostic')],
        }),
      );
    }
    // The reconciler (workflow) asks whether an approval's task still waits, and starts the mandatory review of an
    // override whose break-glass run was lost.
    workflow.addToRolePolicy(new PolicyStatement({ actions: ['states:SendTaskHeartbeat'], resources: ['*'] }));
    workflow.addToRolePolicy(
      new PolicyStatement({ actions: ['states:StartExecution'], resources: [machineArn(this, prefix, 'review')] }),
    );
    // Approval decisions (Slack) and buffered input handed to a waiting task (all three). The review machine is
    // otherwise started by the state machines themselves.
    for (const fn of [slack, workflow, notifier]) {
      fn.addToRolePolicy(new PolicyStatement({ actions: ['states:SendTaskSuccess'], resources: ['*'] }));
    }

    // The cluster reader gets its kubeconfigs and nothing else: no table, no Step Functions, no Slack.
    for (const secret of Object.values(this.kubeconfigSecrets)) {
      clusterReader.addToRolePolicy(
        new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secret.secretArn] }),
      );
    }
  }

  /**
   * The table grant for one function: its actions on the table, DeleteItem only under the partition key prefixes it
   * deletes from (an IAM condition on the leading key), and Query, nothing else, on the index ARNs.
   */
  private grantTable(fn: CalmopsFunction, access: (typeof TABLE_ACCESS)[keyof typeof TABLE_ACCESS]): void {
    fn.addToRolePolicy(new PolicyStatement({ actions: [...access.table], resources: [this.table.tableArn] }));
    if (access.deleteUnder.length > 0) {
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: [DELETE],
          resources: [this.table.tableArn],
          conditions: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': access.deleteUnder.map((prefix) => `${prefix}*`) },
          },
        }),
      );
    }
    if (access.index) {
      fn.addToRolePolicy(
        new PolicyStatement({
          actions: [QUERY],
          resources: TABLE_DEFINITION.globalSecondaryIndexes.map(
            (gsi) => `${this.table.tableArn}/index/${gsi.indexName}`,
          ),
        }),
      );
    }
  }

  private buildEndpoint(settings: Settings): HttpApi {
    const api = new HttpApi(this, 'SlackApi', {
      apiName: `${this.stackName}-slack`,
      description: 'calmops Slack endpoint (slash commands, interactivity, events)',
      createDefaultStage: false,
    });
    const [route] = api.addRoutes({
      path: '/slack/events',
      methods: [HttpMethod.POST],
      integration: new HttpLambdaIntegration('SlackIntegration', this.functions.slack),
    });
    Validations.of(route!).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Slack cannot present IAM, JWT or API-key credentials. Every request is authenticated by its Slack ' +
        'signature (HMAC of the body with the signing secret, with a timestamp window) in the function, before ' +
        'anything else happens.',
    });
    const accessLogs = new LogGroup(this, 'SlackApiAccessLogs', {
      retention: settings.logRetentionDays,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    new HttpStage(this, 'SlackApiStage', {
      httpApi: api,
      stageName: '$default',
      autoDeploy: true,
      // Slack's own rate limits keep real traffic far below this; the limit caps what a flood can cost.
      throttle: { rateLimit: 50, burstLimit: 100 },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.jsonWithStandardFields(),
      },
    });
    return api;
  }

  private alarmActions(settings: Settings): IAlarmAction[] {
    const actions: IAlarmAction[] = [];
    if (settings.alarmEmail !== undefined) {
      // CloudWatch cannot publish to a topic encrypted with the AWS-managed SNS key, so the topic gets its own key.
      const key = new Key(this, 'AlarmTopicKey', {
        description: 'calmops alarm topic encryption',
        enableKeyRotation: true,
      });
      key.grant(new ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
      const topic = new Topic(this, 'AlarmTopic', {
        displayName: 'calmops alarms',
        masterKey: key,
        enforceSSL: true,
      });
      topic.addSubscription(new EmailSubscription(settings.alarmEmail));
      actions.push(new SnsAction(topic));
      new CfnOutput(this, 'AlarmTopicArn', { value: topic.topicArn, description: 'Alarm notifications' });
    }
    if (settings.alarmTopicArn !== undefined) {
      actions.push(new SnsAction(Topic.fromTopicArn(this, 'ExistingAlarmTopic', settings.alarmTopicArn)));
    }
    if (actions.length === 0) {
      // Synth and deploy print this; without it, a deploy succeeds and nobody learns that its alarms go nowhere.
      Annotations.of(this).addWarningV2('calmops:alarms-without-destination', NO_ALARM_DESTINATION_WARNING);
    }
    return actions;
  }

  /** Every AwsSolutions finding calmops accepts, each with the reason it is acceptable here. */
  private acknowledgeChecks(): void {
    for (const [name, fn] of Object.entries(this.functions)) {
      Validations.of(fn.role!).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          name === 'clusterReader'
            ? 'X-Ray PutTraceSegments/PutTelemetryRecords do not support resource-level permissions; in a VPC, ' +
              'neither do the network interface actions Lambda uses to attach the function.'
            : 'X-Ray PutTraceSegments/PutTelemetryRecords and Step Functions SendTaskSuccess do not support ' +
              'resource-level permissions; for the latter the task token itself is the authorization.',
      });
    }
    if (this.table.encryptionKey !== undefined) {
      for (const fn of [this.functions.slack, this.functions.workflow, this.functions.notifier]) {
        for (const action of ['kms:GenerateDataKey*', 'kms:ReEncrypt*']) {
          Validations.of(fn.role!).acknowledge({
            id: `AwsSolutions-IAM5[Action::${action}]`,
            reason: 'The table grant’s KMS actions, on the table’s own key only (the resource is that key’s ARN).',
          });
        }
      }
    }
    const sfnExecutions = (machine: 'diagnostic' | 'review') =>
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${this.stackName}-${machine}:*]`;
    for (const fn of [this.functions.slack, this.functions.workflow]) {
      Validations.of(fn.role!).acknowledge({
        id: sfnExecutions('diagnostic'),
        reason: 'DescribeExecution acts on executions, named per session; scoped to the diagnostic machine.',
      });
    }
    Validations.of(this.machines.diagnostic.role).acknowledge({
      id: sfnExecutions('review'),
      reason: 'The .sync:2 plan review describes and stops its child executions; scoped to the review machine.',
    });
    for (const machine of Object.values(this.machines.all())) {
      Validations.of(machine.role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'CloudWatch Logs delivery (logs:*LogDelivery*, DescribeLogGroups) and X-Ray segments for the state ' +
          'machine do not support resource-level permissions.',
      });
    }
    for (const secret of [this.slackSecret, ...Object.values(this.kubeconfigSecrets)]) {
      Validations.of(secret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          'Slack credentials are rotated in the Slack app settings and kubeconfig tokens by the cluster admin; ' +
          'both are put into the secret by hand (docs/deploy.md), there is nothing a rotation Lambda could do.',
      });
    }
  }

  private outputs(settings: Settings): void {
    new CfnOutput(this, 'SlackRequestUrl', {
      value: `${this.api.apiEndpoint}/slack/events`,
      description: 'Paste into the Slack app: slash commands, interactivity and event subscriptions',
    });
    new CfnOutput(this, 'SlackSecretName', {
      value: this.slackSecret.secretName,
      description: 'Put {"signingSecret","botToken"} here',
    });
    for (const cluster of settings.clusters) {
      new CfnOutput(this, `KubeconfigSecretName-${cluster}`, {
        value: this.kubeconfigSecrets[cluster]!.secretName,
        description: `Put the read-only kubeconfig for cluster ${cluster} here`,
      });
    }
    new CfnOutput(this, 'ClusterReaderRoleArn', {
      value: this.functions.clusterReader.role!.roleArn,
      description: 'The IAM role to grant read-only access on EKS (access entry)',
    });
    if (this.policyParameter !== undefined) {
      new CfnOutput(this, 'PolicyParameterName', {
        value: this.policyParameter.parameterName,
        description: 'The channel policy the functions read (re-read within a minute of a change)',
      });
    }
    const readerGroups = this.functions.clusterReader.isBoundToVpc
      ? this.functions.clusterReader.connections.securityGroups
      : [];
    if (readerGroups.length > 0) {
      new CfnOutput(this, 'ClusterReaderSecurityGroupIds', {
        value: readerGroups.map((group) => group.securityGroupId).join(','),
        description: 'Allow HTTPS (443) from these into each private API server’s security group',
      });
    }
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'DiagnosticStateMachineArn', { value: this.machines.diagnostic.stateMachineArn });
  }
}

export class EnvironmentTooLargeError extends Error {
  override readonly name = 'EnvironmentTooLargeError';
}

export class PolicyTooLargeError extends Error {
  override readonly name = 'PolicyTooLargeError';
}

/**
 * Fails the synth, instead of the deploy, when the functions' environment cannot fit. Unresolved values (ARNs,
 * names) are counted at 128 bytes each, more than any of them resolves to; the house defaults add under 200.
 */
export function checkEnvironmentSize(what: string, env: Record<string, string>): void {
  let bytes = 200;
  for (const [key, value] of Object.entries(env)) {
    bytes += key.length + Buffer.byteLength(value.replace(/\$\{Token\[[^\]]+\]\}/g, 'x'.repeat(128)));
  }
  if (bytes > LAMBDA_ENV_LIMIT) {
    throw new EnvironmentTooLargeError(
      `The ${what} functions' environment would be about ${bytes} bytes; Lambda allows ${LAMBDA_ENV_LIMIT}. ` +
        'Deploy fewer clusters per stack.',
    );
  }
}
