import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import { SSMClient } from '@aws-sdk/client-ssm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { PolicyError } from '../../../src/policy/channel-policy.js';
import { PolicyParameterError, parameterPolicySource, policySourceFor } from '../../../src/policy/policy-source.js';

/** Just enough of SSM's JSON protocol for GetParameter, as the AWS SDK speaks it. */
function fakeSsm() {
  const parameters = new Map<string, string>();
  const requests: { target: string; name: string }[] = [];
  let failing = false;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const { Name } = JSON.parse(body || '{}') as { Name: string };
      requests.push({ target, name: Name });
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(json));
      };
      if (failing) return send(500, { __type: 'InternalServerError', message: 'boom' });
      const value = parameters.get(Name);
      if (target !== 'AmazonSSM.GetParameter' || value === undefined) {
        return send(400, { __type: 'ParameterNotFound', message: `${Name} not found` });
      }
      send(200, { Parameter: { Name, Type: 'String', Value: value, Version: 1, DataType: 'text' } });
    });
  });
  return {
    parameters,
    requests,
    fail(on: boolean) {
      failing = on;
    },
    server,
    async start(): Promise<string> {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
  };
}

const POLICY = (cluster: string) =>
  JSON.stringify({ defaults: { cluster, approverGroup: 'SAPPROVERS', seniorUsers: ['USENIOR'] } });

describe('the channel policy from an SSM parameter', () => {
  const ssm = fakeSsm();
  let provider: SSMProvider;

  beforeAll(async () => {
    const endpoint = await ssm.start();
    provider = new SSMProvider({
      awsSdkV3Client: new SSMClient({
        endpoint,
        region: 'eu-west-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
        maxAttempts: 1,
      }),
    });
  });
  afterEach(() => {
    vi.useRealTimers();
    ssm.fail(false);
    ssm.requests.length = 0;
    provider.clearCache();
  });
  afterAll(() => new Promise<void>((resolve) => ssm.server.close(() => resolve())));

  it('is read through Powertools, cached for maxAge, and an edit is in force after it without a redeploy', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    ssm.parameters.set('/calmops/policy', POLICY('prod'));
    const source = parameterPolicySource('/calmops/policy', { provider, maxAgeSeconds: 60 });

    expect((await source.current())?.forChannel('CANY')?.cluster).toBe('prod');
    ssm.parameters.set('/calmops/policy', POLICY('staging'));
    vi.advanceTimersByTime(30_000);
    expect((await source.current())?.forChannel('CANY')?.cluster).toBe('prod');
    expect(ssm.requests).toEqual([{ target: 'AmazonSSM.GetParameter', name: '/calmops/policy' }]);

    vi.advanceTimersByTime(31_000);
    expect((await source.current())?.forChannel('CANY')?.cluster).toBe('staging');
    expect(ssm.requests).toHaveLength(2);
  });

  it('holds policies far past Lambda’s 4 KB of environment variables', async () => {
    const channels = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [
        `C${String(i).padStart(8, '0')}`,
        { cluster: 'prod', allowedNamespaces: ['payments-api', 'payments-worker'] },
      ]),
    );
    const text = JSON.stringify({ defaults: JSON.parse(POLICY('prod')).defaults, channels });
    expect(text.length).toBeGreaterThan(8192);
    ssm.parameters.set('/calmops/big', text);
    const policy = await parameterPolicySource('/calmops/big', { provider }).current();
    expect(policy?.listedChannels()).toHaveLength(200);
  });

  it('keeps the last good policy through a bad edit or an SSM failure, and says so once per edit', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    ssm.parameters.set('/calmops/policy', POLICY('prod'));
    const stale: Error[] = [];
    const source = parameterPolicySource('/calmops/policy', {
      provider,
      maxAgeSeconds: 1,
      onStale: (error) => stale.push(error),
    });
    await source.current();

    ssm.parameters.set('/calmops/policy', JSON.stringify({ defaults: { cluster: 'prod', aproverGroup: 'S1' } }));
    vi.advanceTimersByTime(2_000);
    expect((await source.current())?.forChannel('CANY')?.cluster).toBe('prod');
    vi.advanceTimersByTime(2_000);
    expect((await source.current())?.forChannel('CANY')?.cluster).toBe('prod');
    expect(stale).toHaveLength(1);
    expect(stale[0]).toBeInstanceOf(PolicyError);
    expect(stale[0]?.message).toMatch(/SSM parameter \/calmops\/policy.*aproverGroup/);

    ssm.fail(true);
    vi.advanceTimersByTime(2_000);
    expect((await source.current())?.forChannel('CANY')?.cluster).toBe('prod');
    expect(stale.at(-1)).toBeInstanceOf(PolicyParameterError);
  });

  it('fails with the parameter’s name when there is no policy to fall back on', async () => {
    const source = parameterPolicySource('/calmops/missing', { provider });
    await expect(source.current()).rejects.toThrow(/channel policy parameter \/calmops\/missing could not be read/);
    ssm.parameters.set('/calmops/bad', '{"channels": {"nope": {}}}');
    await expect(parameterPolicySource('/calmops/bad', { provider }).current()).rejects.toThrow(PolicyError);
  });
});

describe('CALMOPS_POLICY_PARAMETER', () => {
  it('names the parameter instead of carrying the policy', async () => {
    const config = loadConfig({ CALMOPS_POLICY_PARAMETER: '/calmops/policy' }, ['policy']);
    expect(config.policy).toEqual({ policy: undefined, parameterName: '/calmops/policy' });
    const inline = loadConfig({ CALMOPS_POLICY_JSON: POLICY('prod') }, ['policy']);
    expect((await policySourceFor(inline.policy).current())?.forChannel('C1')?.cluster).toBe('prod');
  });

  it('is refused when malformed or set beside an inline policy', () => {
    for (const [env, message] of [
      [{ CALMOPS_POLICY_PARAMETER: 'calmops policy' }, /CALMOPS_POLICY_PARAMETER: must be an SSM parameter name/],
      [{ CALMOPS_POLICY_PARAMETER: '/aws/reserved' }, /reserved by SSM/],
      [{ CALMOPS_POLICY_PARAMETER: '/calmops/policy', CALMOPS_POLICY_JSON: '{}' }, /not both/],
    ] as const) {
      expect(() => loadConfig(env, ['policy'])).toThrow(ConfigError);
      expect(() => loadConfig(env, ['policy'])).toThrow(message);
    }
  });
});
