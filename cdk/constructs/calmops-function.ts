import { type Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, type ParamsAndSecretsLayerVersion, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { ENV } from '../../src/env-names.js';
import { nodejsBundling } from '../bundling.js';

/**
 * A Lambda function with the house defaults: esbuild bundling on the local machine (no Docker) with the settings of
 * cdk/bundling.ts (ESM with a `createRequire` banner, Bolt's unused receivers left out), Node 24 on ARM64, source
 * maps, X-Ray tracing, Powertools settings, the Parameters and Secrets extension for a function that reads a parameter
 * or a secret (cdk/parameters-extension.ts), and its own log group with a retention period. Each function also gets
 * its own role whose only built-in permission is writing to that log group, so every other permission is an
 * explicit grant in the stack.
 */

export { ESM_REQUIRE_BANNER } from '../bundling.js';

/** Where Lambda unpacks the bundle; the copied templates folder lives beside the handler. */
const LAMBDA_TASK_ROOT = '/var/task';

export interface CalmopsFunctionProps {
  /** Absolute path of the entry file (`functions/<name>.ts`). */
  entry: string;
  /** The project root: holds package.json, package-lock.json and tsconfig.json. */
  projectRoot: string;
  description: string;
  timeout: Duration;
  memorySize?: number;
  logRetention: RetentionDays;
  environment?: Record<string, string>;
  /** Ship the repository's `templates/` folder with the bundle and point CALMOPS_TEMPLATES_DIR at it. */
  withTemplates?: boolean;
  /** Extra files (relative to projectRoot) copied to the bundle root, e.g. helper scripts run as processes. */
  extraFiles?: readonly string[];
  /** Powertools service name; defaults to `calmops`. */
  serviceName?: string;
  /** The Parameters and Secrets extension, for a function that reads an SSM parameter or a secret. */
  paramsAndSecrets?: ParamsAndSecretsLayerVersion;
  /** Attach the function to a VPC (the role then needs the ENI permissions, granted by the caller). */
  vpc?: { vpc: IVpc; subnets: SubnetSelection; securityGroups?: ISecurityGroup[] };
}

export class CalmopsFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: CalmopsFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention,
      // Logs are the audit trail of what the bot did; they outlive a stack that is torn down.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `calmops ${id}: writes its own logs; every other permission is granted explicitly`,
    });
    const copies = [...(props.withTemplates ? ['templates'] : []), ...(props.extraFiles ?? [])];
    super(scope, id, {
      entry: props.entry,
      handler: 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: `${props.projectRoot}/package-lock.json`,
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout,
      tracing: Tracing.ACTIVE,
      role,
      logGroup,
      ...(props.paramsAndSecrets === undefined ? {} : { paramsAndSecrets: props.paramsAndSecrets }),
      ...(props.vpc === undefined
        ? {}
        : {
            vpc: props.vpc.vpc,
            vpcSubnets: props.vpc.subnets,
            ...(props.vpc.securityGroups === undefined ? {} : { securityGroups: props.vpc.securityGroups }),
          }),
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: props.serviceName ?? 'calmops',
        POWERTOOLS_METRICS_NAMESPACE: 'calmops',
        POWERTOOLS_LOG_LEVEL: 'INFO',
        ...(props.withTemplates ? { [ENV.templatesDir]: `${LAMBDA_TASK_ROOT}/templates` } : {}),
        ...props.environment,
      },
      bundling: {
        ...nodejsBundling(props.projectRoot),
        forceDockerBundling: false,
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir: string, outputDir: string) =>
            copies.map((path) => `cp -R "${inputDir}/${path}" "${outputDir}/"`),
        },
      },
    });
    // The role replaces AWSLambdaBasicExecutionRole (which may write to any log group) with this group only.
    logGroup.grantWrite(role);
  }
}
