import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parametersExtension } from '../../../src/aws-parameters/extension.js';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { PolicyError } from '../../../src/policy/channel-policy.js';
import { PolicyParameterError, parameterPolicySource, policySourceFor } from '../../../src/policy/policy-source.js';
import { type FakeParametersExtension, startFakeParametersExtension } from '../../support/parameters-extension.js';

const POLICY = (cluster: string) =>
  JSON.stringify({ defaults: { cluster, approverGroup: 'SAPPROVERS', seniorUsers: ['USENIOR'] } });

describe('the channel policy from an SSM parameter', () => {
  let extension: FakeParametersExtension;

  beforeAll(async () => {
    extension = await startFakeParametersExtension();
  });
  afterEach(() => extension.reset());
  afterAll(() => extension.close());

  /** The source as the functions build it: from their environment, through the extension at its endpoint. */
  const sourceFromEnv = (name: string, onStale?: (error: Error) => void) => {
    const config = loadConfig(
      {
        CALMOPS_POLICY_PARAMETER: name,
        CALMOPS_PARAMETERS_SECRETS_ENDPOINT: extension.endpoint,
        AWS_SESSION_TOKEN: extension.sessionToken,
      },
      ['policy'],
    );
    return policySourceFor(config.policy, onStale === undefined ? {} : { onStale });
  };

  it('is read through the extension with the session token, and an edit is in force at the next read', async () => {
    extension.putParameter('/calmops/policy', POLICY('prod'));
    const source = sourceFromEnv('/calmops/policy');

    expect((await source.current())?.forChannel('CANY')?.cluster).toBe('prod');
    extension.putParameter('/calmops/policy', POLICY('staging'));
    expect((await source.current())?.forChannel('CANY')?.cluster).toBe('staging');
    expect(extension.requests).toEqual([
      {
        path: '/systemsmanager/parameters/get',
        query: { name: '/calmops/policy', withDecryption: 'true' },
        authorized: true,
      },
      {
        path: '/systemsmanager/parameters/get',
        query: { name: '/calmops/policy', withDecryption: 'true' },
        authorized: true,
      },
    ]);
  });

  it('reads a SecureString policy decrypted', async () => {
    extension.putParameter('/calmops/secure-policy', POLICY('prod'), 'SecureString');
    expect((await sourceFromEnv('/calmops/secure-policy').current())?.forChannel('CANY')?.cluster).toBe('prod');
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
    extension.putParameter('/calmops/big', text);
    const policy = await parameterPolicySource('/calmops/big', parametersExtension(extension.access)).current();
    expect(policy?.listedChannels()).toHaveLength(200);
  });

  it('keeps the last good policy through a bad edit or an extension failure, and says so once per edit', async () => {
    extension.putParameter('/calmops/policy', POLICY('prod'));
    const stale: Error[] = [];
    const source = sourceFromEnv('/calmops/policy', (error) => stale.push(error));
    await source.current();

    extension.putParameter('/calmops/policy', JSON.stringify({ defaults: { cluster: 'prod', aproverGroup: 'S1' } }));
    expect((await source.current())?.forChannel('CANY')?.cluster).toBe('prod');
    expect((await source.current())?.forChannel('CANY')?.cluster).toBe('prod');
    expect(stale).toHaveLength(1);
    expect(stale[0]).toBeInstanceOf(PolicyError);
    expect(stale[0]?.message).toMatch(/SSM parameter \/calmops\/policy.*aproverGroup/);

    extension.answerNext(500, 'internal error');
    expect((await source.current())?.forChannel('CANY')?.cluster).toBe('prod');
    expect(stale.at(-1)).toBeInstanceOf(PolicyParameterError);
    expect(stale.at(-1)?.message).toMatch(/\/calmops\/policy could not be read.*answered 500/);

    extension.putParameter('/calmops/policy', POLICY('staging'));
    expect((await source.current())?.forChannel('CANY')?.cluster).toBe('staging');
  });

  it('fails with the parameter’s name when there is no policy to fall back on', async () => {
    const source = sourceFromEnv('/calmops/missing');
    await expect(source.current()).rejects.toThrow(PolicyParameterError);
    await expect(source.current()).rejects.toThrow(
      /channel policy parameter \/calmops\/missing could not be read.*not found/,
    );
    extension.putParameter('/calmops/bad', '{"channels": {"nope": {}}}');
    await expect(sourceFromEnv('/calmops/bad').current()).rejects.toThrow(PolicyError);
    extension.putParameter('/calmops/blank', '  ');
    await expect(sourceFromEnv('/calmops/blank').current()).rejects.toThrow(/\/calmops\/blank is empty/);
  });

  it('is refused by the extension without the function’s session token', async () => {
    extension.putParameter('/calmops/policy', POLICY('prod'));
    const config = loadConfig(
      { CALMOPS_POLICY_PARAMETER: '/calmops/policy', CALMOPS_PARAMETERS_SECRETS_ENDPOINT: extension.endpoint },
      ['policy'],
    );
    await expect(policySourceFor(config.policy).current()).rejects.toThrow(/refused.*AWS_SESSION_TOKEN is not set/);
    expect(extension.requests.map((r) => r.authorized)).toEqual([false]);
  });
});

describe('CALMOPS_POLICY_PARAMETER', () => {
  it('names the parameter instead of carrying the policy', async () => {
    const config = loadConfig({ CALMOPS_POLICY_PARAMETER: '/calmops/policy' }, ['policy']);
    expect(config.policy).toEqual({
      policy: undefined,
      parameter: { name: '/calmops/policy', extension: { endpoint: 'http://localhost:2773' } },
    });
    const inline = loadConfig({ CALMOPS_POLICY_JSON: POLICY('prod') }, ['policy']);
    expect((await policySourceFor(inline.policy).current())?.forChannel('C1')?.cluster).toBe('prod');
  });

  it('is refused when malformed or set beside an inline policy', () => {
    for (const [env, message] of [
      [{ CALMOPS_POLICY_PARAMETER: 'calmops policy' }, /CALMOPS_POLICY_PARAMETER: must be an SSM parameter name/],
      [{ CALMOPS_POLICY_PARAMETER: '/aws/reserved' }, /reserved by SSM/],
      [{ CALMOPS_POLICY_PARAMETER: '/calmops/policy', CALMOPS_POLICY_JSON: '{}' }, /not both/],
      [
        { CALMOPS_POLICY_PARAMETER: '/calmops/policy', CALMOPS_PARAMETERS_SECRETS_ENDPOINT: 'localhost:2773' },
        /CALMOPS_PARAMETERS_SECRETS_ENDPOINT: must be an http\(s\) URL/,
      ],
      [
        { CALMOPS_POLICY_PARAMETER: '/calmops/policy', PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: '99999' },
        /PARAMETERS_SECRETS_EXTENSION_HTTP_PORT/,
      ],
    ] as const) {
      expect(() => loadConfig(env, ['policy'])).toThrow(ConfigError);
      expect(() => loadConfig(env, ['policy'])).toThrow(message);
    }
  });

  it('finds the extension at its own port variable, or at CALMOPS_PARAMETERS_SECRETS_ENDPOINT', () => {
    const at = (env: Record<string, string>) =>
      loadConfig({ CALMOPS_POLICY_PARAMETER: '/calmops/policy', ...env }, ['policy']).policy.parameter?.extension;
    expect(at({ PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: '2999' })).toEqual({ endpoint: 'http://localhost:2999' });
    expect(at({ CALMOPS_PARAMETERS_SECRETS_ENDPOINT: 'http://127.0.0.1:4566/', AWS_SESSION_TOKEN: 'tok' })).toEqual({
      endpoint: 'http://127.0.0.1:4566',
      sessionToken: 'tok',
    });
  });
});
