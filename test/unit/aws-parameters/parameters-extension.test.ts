import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ParametersExtensionError, parametersExtension } from '../../../src/aws-parameters/extension.js';
import {
  ConfigError,
  loadConfig,
  resolveAlertsToken,
  resolveKubeconfig,
  resolveSlackCredentials,
} from '../../../src/config.js';
import { type FakeParametersExtension, startFakeParametersExtension } from '../../support/parameters-extension.js';

const SLACK_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:calmops/slack-AbCdEf';
const ALERTS_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:calmops/alerts-token-AbCdEf';
const KUBECONFIG_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:calmops/kubeconfig/prod-AbCdEf';
const SIGNING_SECRET = 'signing-secret-value-0123456789';
const BOT_TOKEN = 'xoxb-bot-token-value-0123456789';
const ALERTS_TOKEN = 'AlertTokenValue0123456789abcdefABCDEF';

let extension: FakeParametersExtension;

beforeAll(async () => {
  extension = await startFakeParametersExtension();
});
afterEach(() => extension.reset());
afterAll(() => extension.close());

/** The configuration the functions would parse from their environment, at the fake extension (null: no token). */
function configFor(env: Record<string, string>, sessionToken: string | null = extension.sessionToken) {
  return loadConfig(
    {
      CALMOPS_PARAMETERS_SECRETS_ENDPOINT: extension.endpoint,
      ...(sessionToken === null ? {} : { AWS_SESSION_TOKEN: sessionToken }),
      ...env,
    },
    ['slack', 'alerts', 'clusters'],
  );
}

/** The rejection, for assertions on its class, message and cause all at once. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('the Slack credentials from Secrets Manager', () => {
  const env = {
    CALMOPS_SLACK_SECRET_ARN: SLACK_ARN,
    CALMOPS_CLUSTERS: JSON.stringify({ prod: { kubeconfigSecretArn: KUBECONFIG_ARN } }),
  };

  it('are read through the extension with the session token', async () => {
    extension.putSecret(SLACK_ARN, JSON.stringify({ signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN }));
    const config = configFor(env);
    expect(await resolveSlackCredentials(config.slack)).toEqual({ signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN });
    expect(extension.requests).toEqual([
      { path: '/secretsmanager/get', query: { secretId: SLACK_ARN }, authorized: true },
    ]);
  });

  it('are refused, naming the secret, without the session token', async () => {
    extension.putSecret(SLACK_ARN, JSON.stringify({ signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN }));
    const error = await rejection(resolveSlackCredentials(configFor(env, null).slack));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain(`CALMOPS_SLACK_SECRET_ARN: secret ${SLACK_ARN}: the extension refused the request`);
    expect(error.message).toContain('AWS_SESSION_TOKEN is not set');
    expect(error.cause).toBeInstanceOf(ParametersExtensionError);
    expect((error.cause as ParametersExtensionError).failure).toBe('unauthorized');

    const wrong = await rejection(resolveSlackCredentials(configFor(env, 'another-session').slack));
    expect((wrong.cause as ParametersExtensionError).failure).toBe('unauthorized');
    expect(wrong.message).not.toContain('AWS_SESSION_TOKEN is not set');
  });

  it('fail as not found when the secret does not exist', async () => {
    const error = await rejection(resolveSlackCredentials(configFor(env).slack));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(/CALMOPS_SLACK_SECRET_ARN: secret arn:.*calmops\/slack-AbCdEf: not found/);
    expect((error.cause as ParametersExtensionError).failure).toBe('not-found');
  });

  it('wait out an extension that is not ready right after a cold start', async () => {
    extension.putSecret(SLACK_ARN, JSON.stringify({ signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN }));
    extension.notReadyFor(2);
    expect(await resolveSlackCredentials(configFor(env).slack)).toEqual({
      signingSecret: SIGNING_SECRET,
      botToken: BOT_TOKEN,
    });
    expect(extension.requests).toHaveLength(3);
  });

  it('refuse a secret that is not the expected JSON, without echoing it', async () => {
    for (const value of [
      JSON.stringify({ botToken: BOT_TOKEN }),
      `signingSecret=${SIGNING_SECRET} botToken=${BOT_TOKEN}`,
      JSON.stringify({ signingSecret: SIGNING_SECRET, botToken: 42 }),
    ]) {
      extension.putSecret(SLACK_ARN, value);
      const error = await rejection(resolveSlackCredentials(configFor(env).slack));
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toContain('the secret must be JSON {"signingSecret": "…", "botToken": "…"}');
      const told = `${error.message} ${JSON.stringify(error.cause ?? null)} ${String(error.cause ?? '')}`;
      expect(told).not.toContain(SIGNING_SECRET);
      expect(told).not.toContain(BOT_TOKEN);
    }
  });

  it('refuse an answer that is not a GetSecretValue output', async () => {
    extension.answerNext(200, BOT_TOKEN);
    const notJson = await rejection(resolveSlackCredentials(configFor(env).slack));
    expect(notJson.message).toMatch(/not JSON/);
    const cause = notJson.cause as ParametersExtensionError;
    expect(cause.failure).toBe('malformed');
    // The JSON parser quotes what it could not parse; none of it is kept.
    expect(cause.cause).toBeUndefined();
    expect(`${notJson.message} ${cause.message}`).not.toContain(BOT_TOKEN);

    extension.answerNext(200, JSON.stringify({ SecretString: 42 }));
    const wrongShape = await rejection(resolveSlackCredentials(configFor(env).slack));
    expect(wrongShape.message).toMatch(/not a GetSecretValue output \(SecretString\)/);
    expect((wrongShape.cause as ParametersExtensionError).failure).toBe('malformed');

    extension.putSecret(SLACK_ARN, new TextEncoder().encode('binary'));
    const binary = await rejection(resolveSlackCredentials(configFor(env).slack));
    expect(binary.message).toMatch(/stored as binary/);
  });
});

describe('the alert token and the kubeconfigs from Secrets Manager', () => {
  it('take the alert token as text or as JSON {"token": …}, and refuse a short one without echoing it', async () => {
    const config = configFor({
      ALERTS_TOKEN_SECRET_ARN: ALERTS_ARN,
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: 's',
      KUBECONFIG: '/k',
    });
    extension.putSecret(ALERTS_ARN, `${ALERTS_TOKEN}\n`);
    expect(await resolveAlertsToken(config.alerts)).toBe(ALERTS_TOKEN);
    extension.putSecret(ALERTS_ARN, JSON.stringify({ token: ALERTS_TOKEN }));
    expect(await resolveAlertsToken(config.alerts)).toBe(ALERTS_TOKEN);
    extension.putSecret(ALERTS_ARN, JSON.stringify({ token: 'short-token-value' }));
    const error = await rejection(resolveAlertsToken(config.alerts));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(/ALERTS_TOKEN_SECRET_ARN: the secret must hold the token/);
    expect(error.message).not.toContain('short-token-value');
  });

  it('read a kubeconfig secret as YAML text, and refuse an empty one', async () => {
    const config = configFor({
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: 's',
      CALMOPS_CLUSTERS: JSON.stringify({
        prod: { kubeconfigSecretArn: KUBECONFIG_ARN },
        dev: { kubeconfigFile: '/k' },
      }),
    });
    expect(await resolveKubeconfig(config.clusters.clusters['dev']!)).toEqual({ file: '/k' });
    extension.putSecret(KUBECONFIG_ARN, 'apiVersion: v1\nkind: Config\n');
    expect(await resolveKubeconfig(config.clusters.clusters['prod']!)).toEqual({
      yaml: 'apiVersion: v1\nkind: Config\n',
    });
    extension.putSecret(KUBECONFIG_ARN, '  \n');
    await expect(resolveKubeconfig(config.clusters.clusters['prod']!)).rejects.toThrow(/must hold the kubeconfig YAML/);
  });
});

describe('the extension client', () => {
  it('asks for SSM parameters decrypted and answers with their value', async () => {
    extension.putParameter('/calmops/secure', 'decrypted-value', 'SecureString');
    expect(await parametersExtension(extension.access).parameter('/calmops/secure')).toBe('decrypted-value');
    expect(extension.requests[0]?.query).toEqual({ name: '/calmops/secure', withDecryption: 'true' });
  });

  it('gives up on an extension that stays not ready after a bounded number of attempts', async () => {
    extension.putParameter('/calmops/policy', 'value');
    extension.notReadyFor(10);
    const error = await rejection(
      parametersExtension(extension.access, { attempts: 3, retryDelayMs: 1 }).parameter('/calmops/policy'),
    );
    expect(error).toBeInstanceOf(ParametersExtensionError);
    expect((error as ParametersExtensionError).failure).toBe('not-ready');
    expect(error.message).toBe('SSM parameter /calmops/policy: the extension was still not ready after 3 attempts');
    expect(extension.requests).toHaveLength(3);
  });

  it('does not retry a refusal, and names the status and the extension’s reason', async () => {
    extension.answerNext(400, 'AccessDeniedException: not authorized to perform ssm:GetParameter');
    const error = await rejection(
      parametersExtension(extension.access, { attempts: 3, retryDelayMs: 1 }).parameter('/calmops/policy'),
    );
    expect(error.message).toBe(
      'SSM parameter /calmops/policy: the extension answered 400: AccessDeniedException: not authorized to perform ssm:GetParameter',
    );
    expect((error as ParametersExtensionError).failure).toBe('failed');
    expect(extension.requests).toHaveLength(1);
  });

  it('refuses a parameter answer without a value', async () => {
    extension.answerNext(200, JSON.stringify({ Parameter: { Name: '/calmops/policy' } }));
    const error = await rejection(parametersExtension(extension.access).parameter('/calmops/policy'));
    expect(error.message).toBe(
      "SSM parameter /calmops/policy: the extension's answer is not a GetParameter output (Parameter.Value)",
    );
  });

  it('reports an endpoint where nothing listens as unreachable, after a bounded number of attempts', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await rejection(
      parametersExtension({ endpoint: `http://127.0.0.1:${port}` }, { attempts: 2, retryDelayMs: 1 }).secret(SLACK_ARN),
    );
    expect(error).toBeInstanceOf(ParametersExtensionError);
    expect((error as ParametersExtensionError).failure).toBe('unreachable');
    expect(error.message).toMatch(/did not answer at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
  });
});
