import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise, type IForbiddenRuleType } from 'dependency-cruiser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The import rules `npm run lint` checks (.dependency-cruiser.cjs), run on a small tree planted for the purpose: each
 * folder boundary refuses an import that crosses it, and the imports the layout relies on pass. `npm run lint` runs the
 * same rules on the repository itself.
 */

const config = createRequire(import.meta.url)('../../../.dependency-cruiser.cjs') as {
  forbidden: IForbiddenRuleType[];
};

/** What every planted importer reaches: one module in each top-level folder. */
const TARGETS: Record<string, string> = {
  'local/stand-in.js': 'export const standIn = 1;\n',
  'cdk/stack.js': 'export const stack = 1;\n',
  'test/support/fake.js': 'export const fake = 1;\n',
  'bench/support/corpus.js': 'export const corpus = 1;\n',
  'build/bundle.js': 'export const bundle = 1;\n',
  'src/cluster/reader.js': 'export const reader = 1;\n',
  'src/app/runtime.js': 'export const runtime = 1;\n',
  'src/workflow/api.js': 'export const api = 1;\n',
  'src/workflow/deps.js': 'export const deps = 1;\n',
  'src/slack/deps.js': 'export const slackDeps = 1;\n',
  'src/triage/index.js': 'export const triage = 1;\n',
  'src/triage/kube/index.js': 'export const kube = 1;\n',
  'src/triage/kube/pods.js': 'export const pods = 1;\n',
  'src/triage/analyze/analyzer.js': 'export const analyzer = 1;\n',
  'src/triage/analyze/crashloop.js': 'export const crashloop = 1;\n',
};

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'calmops-dependency-rules-'));
  for (const [file, text] of Object.entries(TARGETS)) await plant(file, text);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function plant(file: string, text: string): Promise<void> {
  await mkdir(join(root, dirname(file)), { recursive: true });
  await writeFile(join(root, file), text);
}

/** The rules one planted module breaks by importing `target` (a path from the tree's root). */
async function violationsOf(file: string, target: string): Promise<string[]> {
  const depth = file.split('/').length - 1;
  await plant(file, `import '${'../'.repeat(depth)}${target}';\n`);
  const result = await cruise([file], {
    baseDir: root,
    validate: true,
    ruleSet: { forbidden: config.forbidden },
  });
  if (typeof result.output === 'string') throw new Error('expected a cruise result, not a report');
  return result.output.summary.violations.map((violation) => violation.rule.name).sort();
}

describe('dependency rules', () => {
  it.each([
    ['bin/calmops.js', 'local/stand-in.js', 'shipped-code-not-from-local'],
    ['build/cli-bundle.js', 'local/stand-in.js', 'shipped-code-not-from-local'],
    ['src/cli/main.js', 'local/stand-in.js', 'shipped-code-not-from-local'],
    ['functions/slack.js', 'local/stand-in.js', 'shipped-code-not-from-local'],
    ['src/cluster/eks-token.js', 'cdk/stack.js', 'shipped-code-not-from-cdk'],
    ['functions/reader.js', 'cdk/stack.js', 'shipped-code-not-from-cdk'],
    ['bin/calmops-cdk.js', 'cdk/stack.js', 'shipped-code-not-from-cdk'],
    ['bin/calmops-test.js', 'test/support/fake.js', 'no-tests-in-product'],
    ['build/compiled-script.js', 'bench/support/corpus.js', 'no-tests-in-product'],
    ['cdk/constructs/fn.js', 'test/support/fake.js', 'no-tests-in-product'],
    ['bench/triage.js', 'test/support/fake.js', 'bench-not-from-test'],
    ['src/workflow/steps.js', 'src/app/runtime.js', 'domain-not-from-app'],
    ['src/slack/handlers/actions.js', 'src/workflow/deps.js', 'workflow-through-its-api'],
    ['src/alerts/handler.js', 'src/workflow/deps.js', 'workflow-through-its-api'],
    ['src/alerts/http.js', 'src/slack/deps.js', 'alerts-not-from-slack'],
    ['src/triage/analyze/ingress.js', 'src/triage/analyze/crashloop.js', 'analyzers-independent'],
    ['src/triage/analyze/run.js', 'src/triage/analyze/crashloop.js', 'analyzers-independent'],
    ['src/workflow/log-target.js', 'src/triage/kube/pods.js', 'triage-through-its-entries'],
    ['cdk/policy.js', 'src/triage/kube/pods.js', 'triage-through-its-entries'],
    ['bench/eval.js', 'src/triage/analyze/crashloop.js', 'triage-through-its-entries'],
  ])('refuses %s importing %s (%s)', async (file, target, rule) => {
    expect(await violationsOf(file, target)).toEqual([rule]);
  });

  it.each([
    ['bin/calmops-run.js', 'build/bundle.js'],
    ['local/launch.js', 'build/bundle.js'],
    ['cdk/calmops-stack.js', 'src/cluster/reader.js'],
    ['functions/workflow.js', 'src/app/runtime.js'],
    ['src/slack/deps.js', 'src/workflow/api.js'],
    ['src/alerts/handler.js', 'src/workflow/api.js'],
    ['src/app/slack-runtime.js', 'src/workflow/deps.js'],
    ['test/unit/reader.js', 'local/stand-in.js'],
    ['bench/eval.js', 'local/stand-in.js'],
    ['src/triage/analyze/index.js', 'src/triage/analyze/crashloop.js'],
    ['src/triage/analyze/dns.js', 'src/triage/analyze/analyzer.js'],
    ['src/triage/analyze/oom-killed.js', 'src/triage/kube/pods.js'],
    ['src/workflow/pod-logs.js', 'src/triage/kube/index.js'],
    ['src/cli/commands/triage.js', 'src/triage/index.js'],
    ['test/unit/triage/kube/pods.test.js', 'src/triage/kube/pods.js'],
  ])('lets %s import %s', async (file, target) => {
    expect(await violationsOf(file, target)).toEqual([]);
  });
});
