import { fileURLToPath } from 'node:url';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CalmopsStack } from './calmops-stack.js';
import { loadPolicyFile } from './policy.js';
import { parseSettings } from './settings.js';

/**
 * The CDK app: `npx cdk synth` / `npx cdk deploy`. Settings come from context (cdk.json or `-c key=value`, see
 * docs/deploy.md). Account and region come from the CLI's environment (CDK_DEFAULT_ACCOUNT/REGION); without
 * credentials the stack synthesizes environment-agnostic, so `cdk synth` works offline.
 */

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const app = new App();
const settings = parseSettings((key) => app.node.tryGetContext(key));
const policyJson =
  settings.policyFile === undefined ? undefined : loadPolicyFile(settings.policyFile, settings.clusters);

new CalmopsStack(app, 'Calmops', {
  stackName: settings.stackName,
  description: 'calmops: calm, evidence-first Kubernetes incident diagnosis in Slack',
  settings,
  projectRoot,
  ...(policyJson === undefined ? {} : { policyJson }),
  ...(process.env['CDK_DEFAULT_ACCOUNT'] && process.env['CDK_DEFAULT_REGION']
    ? { env: { account: process.env['CDK_DEFAULT_ACCOUNT'], region: process.env['CDK_DEFAULT_REGION'] } }
    : {}),
});

Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
