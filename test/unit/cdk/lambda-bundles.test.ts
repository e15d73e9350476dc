import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaBuildOptions, OMITTED_MODULE, OMITTED_PACKAGES } from '../../../cdk/bundling.js';
import { FUNCTION_ENTRIES } from '../../../cdk/calmops-stack.js';
import type { SlackAppDeps } from '../../../src/slack/deps.js';
import type * as Receiver from '../../../src/slack/receiver.js';
import { loadTemplates } from '../../../src/triage/templates/template-registry.js';
import { slashCommand } from '../../support/signed-slack.js';

/**
 * The Lambda bundles as the CDK builds them (cdk/bundling.ts), checked through esbuild's metafile: what each
 * function carries, and that Bolt still answers with its unused receivers' packages replaced.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const OUT = mkdtempSync(join(tmpdir(), 'calmops-bundles-'));

async function bundleInputs(entry: string): Promise<string[]> {
  const options = lambdaBuildOptions({ projectRoot: ROOT, entry, outfile: join(OUT, 'unused.mjs') });
  const result = await build({ ...options, write: false, metafile: true });
  const output = Object.values((result.metafile as Metafile).outputs).find((o) => o.entryPoint !== undefined);
  return Object.keys(output?.inputs ?? {});
}

// Each entry is bundled once, however many tests look at it.
const bundled = new Map<string, Promise<string[]>>();
function inputsOf(entry: string): Promise<string[]> {
  let inputs = bundled.get(entry);
  if (inputs === undefined) {
    inputs = bundleInputs(entry);
    bundled.set(entry, inputs);
  }
  return inputs;
}

const fromPackage = (inputs: string[], name: string) => inputs.filter((p) => p.includes(`node_modules/${name}/`));

afterAll(() => rmSync(OUT, { recursive: true, force: true }));

describe('the cluster reader bundle', () => {
  let inputs: string[];
  beforeAll(async () => {
    inputs = await inputsOf(FUNCTION_ENTRIES.clusterReader);
  }, 60_000);

  it('has the Kubernetes client and no table or state machine client, which its role may not use', () => {
    expect(fromPackage(inputs, '@kubernetes/client-node').length).toBeGreaterThan(0);
    expect(fromPackage(inputs, '@aws-sdk/client-dynamodb')).toEqual([]);
    expect(fromPackage(inputs, '@aws-sdk/lib-dynamodb')).toEqual([]);
    expect(fromPackage(inputs, '@aws-sdk/client-sfn')).toEqual([]);
    expect(inputs.filter((p) => p.startsWith('src/store/'))).toEqual([]);
  });
});

describe('the Slack bundle', () => {
  let inputs: string[];
  beforeAll(async () => {
    inputs = await inputsOf(FUNCTION_ENTRIES.slack);
  }, 60_000);

  it("has Bolt and its Lambda receiver, and none of the other receivers' packages", () => {
    expect(inputs).toContain('node_modules/@slack/bolt/dist/receivers/AwsLambdaReceiver.js');
    const receiversOnly = [
      'express',
      'body-parser',
      'raw-body',
      'iconv-lite',
      '@slack/socket-mode',
      'undici',
      '@slack/oauth',
      'jsonwebtoken',
    ];
    for (const name of new Set([...receiversOnly, ...OMITTED_PACKAGES])) {
      expect(fromPackage(inputs, name), name).toEqual([]);
    }
    expect(inputs).toContain(OMITTED_MODULE.replace(/^\.\//, ''));
  });
});

describe('every function bundle', () => {
  // The functions read parameters and secrets through the Parameters and Secrets extension's HTTP endpoint; only the
  // doctor, which runs where there is no extension, uses these, and it is not part of any function.
  const readersLeftOut = [
    '@aws-sdk/client-ssm',
    '@aws-sdk/client-secrets-manager',
    '@aws-lambda-powertools/parameters',
  ];

  for (const [name, entry] of Object.entries(FUNCTION_ENTRIES)) {
    it(`${name}: reads parameters and secrets without the SSM, Secrets Manager or Powertools Parameters clients`, async () => {
      const inputs = await inputsOf(entry);
      expect(inputs).toContain('src/aws-parameters/extension.ts');
      for (const pkg of readersLeftOut) expect(fromPackage(inputs, pkg), pkg).toEqual([]);
    }, 60_000);
  }
});

describe('the stand-in for an omitted package', () => {
  const stub = createRequire(import.meta.url)(join(ROOT, OMITTED_MODULE)) as Record<string, unknown> &
    ((...args: unknown[]) => unknown);

  it('loads and is read from quietly, as Bolt does with the receivers it does not run', () => {
    expect(stub.__esModule).toBe(true);
    expect(typeof stub.default).toBe('function');
    expect(typeof stub.SocketModeClient).toBe('function');
    expect((stub as { then?: unknown }).then).toBeUndefined();
  });

  it('throws a clear error when called or constructed', () => {
    expect(() => stub()).toThrow(/left out of the calmops Lambda bundles/);
    const Client = stub.SocketModeClient as new () => unknown;
    expect(() => new Client()).toThrow(expect.objectContaining({ name: 'OmittedModuleError' }));
    expect(() => (stub.default as () => unknown)()).toThrow(/cdk\/bundling\.ts/);
  });
});

describe('Bolt bundled with the stand-ins', () => {
  it('answers a signed slash command through AwsLambdaReceiver', async () => {
    const outfile = join(OUT, 'receiver.mjs');
    // No source map: the sources are not shipped, and the test runner would warn that it cannot find them.
    await build({
      ...lambdaBuildOptions({ projectRoot: ROOT, entry: 'src/slack/receiver.ts', outfile }),
      sourcemap: false,
    });
    const bundled = (await import(pathToFileURL(outfile).href)) as typeof Receiver;
    const secret = 'bundle-test-secret';
    const deps = {
      signingSecret: secret,
      botToken: 'xoxb-bundle-test',
      botUserId: 'UCALMOPS',
      client: { slackApiUrl: 'http://127.0.0.1:9/api/' },
      store: { dedupe: { firstDelivery: async () => true } },
      registry: loadTemplates(),
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    } as unknown as SlackAppDeps;
    const handle = bundled.createSlackHttpHandler(deps);
    const request = slashCommand('help');
    const response = await handle({
      headers: {
        'content-type': request.contentType,
        ...bundled.signSlackRequest(secret, request.body, Date.now() / 1000),
      },
      body: request.body,
    });
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ response_type: 'ephemeral', text: expect.any(String) });
  }, 60_000);
});
