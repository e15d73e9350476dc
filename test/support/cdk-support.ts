import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { CalmopsStack, FUNCTION_ENTRIES } from '../../cdk/calmops-stack.js';
import { parseSettings } from '../../cdk/settings.js';

export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Entry files for template-only tests. Bundling is skipped there (`aws:cdk:bundling-stacks: []`), so the entries
 * only have to exist inside the project; the bundling test in test/integration uses the real ones.
 */
function templateOnlyEntries(): string {
  const dir = join(PROJECT_ROOT, 'test', 'artifacts', 'cdk-entries');
  mkdirSync(dir, { recursive: true });
  for (const path of Object.values(FUNCTION_ENTRIES)) {
    writeFileSync(join(dir, path.replace(/^functions\//, '')), 'export const handler = async () => ({});\n');
  }
  return dir;
}

export interface Synthesized {
  /** The cloud assembly folder (assets such as the state machine definitions are staged there). */
  outdir: string;
  stack: CalmopsStack;
  template: Template;
}

/**
 * Synthesizes the stack without bundling, from context values as `-c key=value` would give them. Nor is the template
 * put through the CDK's built-in CloudFormation validation: the deploy path's test (test/integration/cdk) synthesizes
 * as a user does, with it, and here it would build its rules engine again in every worker, for seconds each time.
 */
export function synthesize(context: Record<string, unknown> = {}, policyJson?: string): Synthesized {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
  const settings = parseSettings((key) => context[key]);
  const stack = new CalmopsStack(app, 'Calmops', {
    stackName: settings.stackName,
    settings,
    projectRoot: PROJECT_ROOT,
    functionsDir: templateOnlyEntries(),
    ...(policyJson === undefined ? {} : { policyJson }),
  });
  const template = Template.fromStack(stack);
  return { outdir: app.outdir, stack, template };
}
