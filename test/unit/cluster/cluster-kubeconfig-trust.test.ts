import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, describe, expect, it } from 'vitest';
import { createClusterReaderHandler } from '../../../functions/cluster-reader.js';
import { KubeconfigError, loadKubeconfig } from '../../../src/cluster/kubeconfig.js';
import { createClusterReader } from '../../../src/cluster/reader.js';
import { kubeconfigYaml } from '../../../src/snapshot-api/kubeconfig.js';
import { writeYaml as stringify } from '../../../src/yaml-text.js';
import { type FakeApi, sendJson, startFakeApi } from '../../support/cluster-fake-api.js';

/**
 * A kubeconfig can make its client run commands (exec plugins, auth-provider `cmd-path`) and can turn off the
 * certificate check. calmops does neither unless a person asks for it at the command line, and the cluster reader
 * function never runs a command; it signs EKS tokens itself instead.
 */

const dir = mkdtempSync(join(tmpdir(), 'calmops-kubeconfig-trust-'));

let api: FakeApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

interface ConfigOptions {
  server: string;
  insecure?: boolean;
  user: Record<string, unknown>;
}

function config({ server, insecure, user }: ConfigOptions): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server, ...(insecure ? { 'insecure-skip-tls-verify': true } : {}) } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'ctx',
  });
}

/** A command that leaves a file behind when it runs, and prints a credential. */
function markingPlugin(name: string): { marker: string; script: string } {
  const marker = join(dir, `${name}.ran`);
  const script = join(dir, `${name}.mjs`);
  writeFileSync(
    script,
    `import { writeFileSync } from 'node:fs';
writeFileSync(${JSON.stringify(marker)}, 'ran');
console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential',
  status: { token: 'plugin-token-0123456789', expirationTimestamp: '2999-01-01T00:00:00Z' },
  access_token: 'gcp-token-0123456789', token_expiry: '2999-01-01T00:00:00Z' }));`,
  );
  return { marker, script };
}

function execUser(script: string) {
  return {
    exec: {
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      command: process.execPath,
      args: [script],
      interactiveMode: 'Never',
    },
  };
}

function gcpUser(script: string) {
  return {
    'auth-provider': {
      name: 'gcp',
      config: {
        'cmd-path': process.execPath,
        'cmd-args': script,
        'token-key': '{.access_token}',
        'expiry-key': '{.token_expiry}',
      },
    },
  };
}

async function podsServer(): Promise<FakeApi> {
  api = await startFakeApi((_req, res) => sendJson(res, 200, { kind: 'PodList', items: [] }));
  return api;
}

describe('kubeconfig commands', () => {
  it('an exec plugin is refused before it can run, naming the user and the way to allow it', async () => {
    const { url } = await podsServer();
    const { marker, script } = markingPlugin('exec-refused');
    const yaml = config({ server: url, insecure: true, user: execUser(script) });
    expect(() => createClusterReader({ kubeconfig: { yaml } })).toThrow(KubeconfigError);
    expect(() => createClusterReader({ kubeconfig: { yaml } })).toThrow(
      /user 'u' of context 'ctx' gets its credential from an exec plugin \(node\), which runs a command on this machine; .*--allow-exec/,
    );
    expect(existsSync(marker)).toBe(false);
    expect(api?.requests).toHaveLength(0);
  });

  it('with allowExec the plugin runs and its token is sent', async () => {
    const { url } = await podsServer();
    const { marker, script } = markingPlugin('exec-allowed');
    const yaml = config({ server: url, insecure: true, user: execUser(script) });
    const reader = createClusterReader({ kubeconfig: { yaml, allowExec: true } });
    await reader.list({ kind: 'pods', namespace: 'shop' });
    expect(existsSync(marker)).toBe(true);
    expect(api?.requests[0]?.headers.authorization).toBe('Bearer plugin-token-0123456789');
  });

  it('an auth-provider cmd-path (gcp) is refused before it can run', async () => {
    const { url } = await podsServer();
    const { marker, script } = markingPlugin('gcp-refused');
    const yaml = config({ server: url, insecure: true, user: gcpUser(script) });
    expect(() => createClusterReader({ kubeconfig: { yaml } })).toThrow(
      /has a gcp auth-provider with cmd-path, which runs a command on this machine/,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('an auth-provider cmd-path runs when allowed', async () => {
    const { url } = await podsServer();
    const { marker, script } = markingPlugin('gcp-allowed');
    const yaml = config({ server: url, insecure: true, user: gcpUser(script) });
    const reader = createClusterReader({ kubeconfig: { yaml, allowExec: true } });
    await reader.list({ kind: 'pods', namespace: 'shop' });
    expect(existsSync(marker)).toBe(true);
    expect(api?.requests[0]?.headers.authorization).toBe('Bearer gcp-token-0123456789');
  });

  it('only the user of the chosen context matters', async () => {
    const { url } = await podsServer();
    const { marker, script } = markingPlugin('other-user');
    const yaml = stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
      users: [
        { name: 'plain', user: { token: 'static-token-0123456789' } },
        { name: 'plugin', user: execUser(script) },
      ],
      contexts: [
        { name: 'a', context: { cluster: 'c', user: 'plain' } },
        { name: 'b', context: { cluster: 'c', user: 'plugin' } },
      ],
      'current-context': 'a',
    });
    await createClusterReader({ kubeconfig: { yaml } }).list({ kind: 'pods', namespace: 'shop' });
    expect(() => createClusterReader({ kubeconfig: { yaml }, context: 'b' })).toThrow(/exec plugin/);
    expect(existsSync(marker)).toBe(false);
  });
});

describe('insecure-skip-tls-verify', () => {
  const https = 'https://127.0.0.1:6443';

  it('is refused for an https server unless allowed', () => {
    const yaml = config({ server: https, insecure: true, user: { token: 'abcdefgh12345678' } });
    expect(() => loadKubeconfig({ yaml })).toThrow(
      /cluster 'c' sets insecure-skip-tls-verify: true for https:\/\/127\.0\.0\.1:6443: .*--insecure-skip-tls-verify/,
    );
    expect(loadKubeconfig({ yaml, allowInsecureTls: true }).server).toBe(https);
  });

  it('is fine for plain http, which has no certificate to check (the local snapshot server)', async () => {
    const { url } = await podsServer();
    expect(loadKubeconfig({ yaml: kubeconfigYaml({ server: url }) }).server).toBe(url);
    await createClusterReader({ kubeconfig: { yaml: kubeconfigYaml({ server: url }) } }).list({ kind: 'pods' });
    expect(api?.requests).toHaveLength(1);
  });

  it('an https server with verification on loads as before', () => {
    const yaml = config({ server: https, user: { token: 'abcdefgh12345678' } });
    expect(loadKubeconfig({ yaml }).server).toBe(https);
  });
});

describe('EKS tokens are signed in-process', () => {
  const AWS = {
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
    AWS_SESSION_TOKEN: 'session-token-example',
  };
  const eksUser = {
    exec: {
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      command: 'node',
      args: ['/var/task/eks-token.mjs', '--cluster-name', 'prod-eks', '--region', 'eu-west-1'],
    },
  };

  function withAws<T>(run: () => Promise<T>): Promise<T> {
    const saved = Object.fromEntries(Object.keys(AWS).map((k) => [k, process.env[k]]));
    Object.assign(process.env, AWS);
    return run().finally(() => {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    });
  }

  function decode(authorization: string | undefined): string {
    expect(authorization).toMatch(/^Bearer k8s-aws-v1\.[A-Za-z0-9_-]+$/);
    return Buffer.from((authorization ?? '').slice('Bearer k8s-aws-v1.'.length), 'base64url').toString('utf8');
  }

  it("the shipped helper's exec entry is recognised and no process is started", async () => {
    const { url } = await podsServer();
    const yaml = config({ server: url, insecure: true, user: eksUser });
    expect(loadKubeconfig({ yaml }).eks).toEqual({ clusterName: 'prod-eks', region: 'eu-west-1' });
    await withAws(() => createClusterReader({ kubeconfig: { yaml } }).list({ kind: 'pods', namespace: 'shop' }));
    const presigned = decode(api?.requests[0]?.headers.authorization);
    expect(presigned).toMatch(/^https:\/\/sts\.eu-west-1\.amazonaws\.com\/\?Action=GetCallerIdentity&/);
    expect(presigned).toContain('X-Amz-Credential=AKIDEXAMPLE%2F');
    expect(presigned).toContain('X-Amz-SignedHeaders=host%3Bx-k8s-aws-id');
  });

  it('a look-alike with other arguments is an ordinary exec plugin, and refused', () => {
    const user = { exec: { ...eksUser.exec, args: ['/var/task/eks-token.mjs', '--cluster-name', 'x', '--run', 'id'] } };
    expect(() => loadKubeconfig({ yaml: config({ server: 'http://127.0.0.1:1', insecure: true, user }) })).toThrow(
      /exec plugin/,
    );
  });

  it('without AWS credentials the read fails as unauthorized, saying why', async () => {
    const { url } = await podsServer();
    const yaml = config({ server: url, insecure: true, user: eksUser });
    const saved = process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_ACCESS_KEY_ID;
    try {
      await expect(createClusterReader({ kubeconfig: { yaml } }).list({ kind: 'pods' })).rejects.toMatchObject({
        reason: 'unauthorized',
        message: expect.stringMatching(/no AWS credentials for the EKS token/),
      });
    } finally {
      if (saved !== undefined) process.env.AWS_ACCESS_KEY_ID = saved;
    }
    expect(api?.requests).toHaveLength(0);
  });
});

describe('the cluster reader function', () => {
  const read = {
    step: 'read',
    sessionId: 's-1',
    scope: ['shop'],
    request: { title: 'list pods', verb: 'list', kind: 'pods', namespace: 'shop', cluster: 'prod' },
  };

  function handlerFor(kubeconfig: string) {
    const file = join(dir, `lambda-${Math.random().toString(36).slice(2)}.kubeconfig`);
    writeFileSync(file, kubeconfig);
    const env = { CALMOPS_CLUSTERS: JSON.stringify({ prod: { kubeconfigFile: file } }) };
    return createClusterReaderHandler(env, { logger: new Logger({ logLevel: 'SILENT' }) });
  }

  it('never runs an exec plugin: there is no way to allow it', async () => {
    const { url } = await podsServer();
    const { marker, script } = markingPlugin('lambda-exec');
    const handler = handlerFor(config({ server: url, insecure: true, user: execUser(script) }));
    await expect(handler(read)).rejects.toThrow(/exec plugin/);
    expect(existsSync(marker)).toBe(false);
    expect(api?.requests).toHaveLength(0);
  });

  it('never runs an auth-provider command', async () => {
    const { url } = await podsServer();
    const { marker, script } = markingPlugin('lambda-gcp');
    const handler = handlerFor(config({ server: url, insecure: true, user: gcpUser(script) }));
    await expect(handler(read)).rejects.toThrow(/cmd-path/);
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses insecure-skip-tls-verify on an https server', async () => {
    const handler = handlerFor(config({ server: 'https://127.0.0.1:1', insecure: true, user: { token: 'abcdefgh1' } }));
    await expect(handler(read)).rejects.toThrow(/insecure-skip-tls-verify/);
  });
});
