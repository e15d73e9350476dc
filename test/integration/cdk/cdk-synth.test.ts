import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EKS_TOKEN_SCRIPT, FUNCTION_ENTRIES } from '../../../cdk/calmops-stack.js';
import { ESM_REQUIRE_BANNER } from '../../../cdk/constructs/calmops-function.js';

/**
 * The deploy path as a user runs it: `npx cdk synth` through the CLI pinned in package.json, without AWS
 * credentials, bundling the real function entries with esbuild and running the AwsSolutions checks that app.ts
 * registers (the CLI exits non-zero on any unacknowledged finding).
 */

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const missing = Object.values(FUNCTION_ENTRIES).filter((entry) => !existsSync(join(ROOT, entry)));
const reason = missing.length > 0 ? ` (skipped: ${missing.join(', ')} not written yet)` : '';

describe.skipIf(missing.length > 0)(`cdk synth with bundling and cdk-nag${reason}`, () => {
  let outdir: string;
  let template: { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };

  beforeAll(async () => {
    outdir = mkdtempSync(join(tmpdir(), 'calmops-cdk-'));
    // No credentials, no version check, no telemetry: synth must work on a machine with no AWS access.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      CDK_DISABLE_VERSION_CHECK: '1',
      CDK_DISABLE_CLI_TELEMETRY: 'true',
    };
    for (const key of Object.keys(env)) if (key.startsWith('AWS_') || key.startsWith('CDK_DEFAULT_')) delete env[key];
    try {
      await run(
        'npx',
        [
          'cdk',
          'synth',
          '--quiet',
          '--no-notices',
          '--output',
          outdir,
          '-c',
          'clusters=prod,staging',
          '-c',
          'tableEncryption=customer-managed',
          '-c',
          'alarmEmail=oncall@example.com',
        ],
        { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024, timeout: 600_000 },
      );
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      throw new Error(`cdk synth failed:\n${stderr ?? ''}\n${stdout ?? ''}`.slice(0, 20_000), { cause: error });
    }
    template = JSON.parse(readFileSync(join(outdir, 'Calmops.template.json'), 'utf8'));
  }, 660_000);

  afterAll(() => {
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  /** The staged asset folder of a function, found through its Code.S3Key (`<hash>.zip`). */
  function assetOf(prefix: string): string {
    const [, fn] = Object.entries(template.Resources).find(
      ([id, r]) => id.startsWith(prefix) && r.Type === 'AWS::Lambda::Function',
    )!;
    const key = (fn.Properties['Code'] as { S3Key: string }).S3Key.replace(/\.zip$/, '');
    return join(outdir, `asset.${key}`);
  }

  it('passes the AwsSolutions checks with every acknowledgement explained', () => {
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8'));
    expect(report.pluginReports).toEqual([]);
    const source = readFileSync(join(ROOT, 'cdk', 'calmops-stack.ts'), 'utf8');
    const acknowledgements = [...source.matchAll(/acknowledge\(\{\s*id:[^}]*?reason:\s*([^}]*?)\}\)/gs)];
    expect(acknowledgements.length).toBeGreaterThan(0);
    for (const match of acknowledgements) expect(match[1]!.trim().length).toBeGreaterThan(40);
  });

  it('bundles each function as an ES module with the createRequire banner and a source map', async () => {
    for (const prefix of ['SlackFunction', 'WorkflowFunction', 'NotifierFunction', 'ClusterReaderFunction']) {
      const dir = assetOf(prefix);
      const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
      expect(code.startsWith(ESM_REQUIRE_BANNER)).toBe(true);
      expect(existsSync(join(dir, 'index.mjs.map'))).toBe(true);
      await run(process.execPath, ['--check', join(dir, 'index.mjs')]);
    }
  });

  it('ships the templates with the workflow and the reader, and the EKS token helper with the reader', () => {
    const shipped = readdirSync(join(ROOT, 'templates'))
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    for (const prefix of ['WorkflowFunction', 'ClusterReaderFunction']) {
      expect(readdirSync(join(assetOf(prefix), 'templates')).sort()).toEqual(shipped);
    }
    const helper = EKS_TOKEN_SCRIPT.split('/').pop()!;
    expect(existsSync(join(assetOf('ClusterReaderFunction'), helper))).toBe(true);
    expect(existsSync(join(assetOf('SlackFunction'), 'templates'))).toBe(false);
  });
});
