import { execFileSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { eksToken, execCredential, parseArgs, presignGetCallerIdentity } from '../../../src/cluster/eks-token.mjs';

const SCRIPT = fileURLToPath(new URL('../../../src/cluster/eks-token.mjs', import.meta.url));
// AWS's documented example credentials; not valid anywhere.
const CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'session/token+with=chars',
};
const NOW = new Date('2025-03-04T05:06:07.000Z');

function toBytes(data: ArrayBuffer | ArrayBufferView): Uint8Array {
  return ArrayBuffer.isView(data)
    ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    : new Uint8Array(data);
}

/** node:crypto behind the Checksum interface the SDK signer expects. */
class Sha256 {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    const key = typeof secret === 'string' || secret === undefined ? secret : toBytes(secret);
    this.hash = key === undefined ? createHash('sha256') : createHmac('sha256', key);
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(typeof data === 'string' ? data : toBytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {}
}

async function sdkPresign(clusterName: string, region: string): Promise<URL> {
  const signer = new SignatureV4({ credentials: CREDENTIALS, region, service: 'sts', sha256: Sha256 });
  const signed = await signer.presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname: `sts.${region}.amazonaws.com`,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host: `sts.${region}.amazonaws.com`, 'x-k8s-aws-id': clusterName },
    },
    { expiresIn: 60, signingDate: NOW },
  );
  const url = new URL(`https://${signed.hostname}${signed.path}`);
  for (const [k, v] of Object.entries(signed.query ?? {})) url.searchParams.set(k, String(v));
  return url;
}

describe('EKS token helper', () => {
  it('signs exactly as the AWS SDK does (same query, same signature)', async () => {
    const ours = new URL(
      presignGetCallerIdentity({ clusterName: 'prod-eu', region: 'eu-west-1', ...CREDENTIALS, now: NOW }),
    );
    const sdk = await sdkPresign('prod-eu', 'eu-west-1');
    expect(ours.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(Object.fromEntries(ours.searchParams)).toEqual(Object.fromEntries(sdk.searchParams));
    expect(ours.searchParams.get('X-Amz-SignedHeaders')).toBe('host;x-k8s-aws-id');
  });

  it('binds the signature to the cluster name', async () => {
    const a = new URL(presignGetCallerIdentity({ clusterName: 'a', region: 'us-east-1', ...CREDENTIALS, now: NOW }));
    const b = new URL(presignGetCallerIdentity({ clusterName: 'b', region: 'us-east-1', ...CREDENTIALS, now: NOW }));
    expect(a.searchParams.get('X-Amz-Signature')).not.toBe(b.searchParams.get('X-Amz-Signature'));
  });

  it('wraps the URL as EKS expects and expires before EKS stops accepting it', () => {
    const url = 'https://sts.us-east-1.amazonaws.com/?Action=GetCallerIdentity';
    const token = eksToken(url);
    expect(token.startsWith('k8s-aws-v1.')).toBe(true);
    expect(token).not.toMatch(/[=+/]/);
    expect(Buffer.from(token.slice('k8s-aws-v1.'.length), 'base64url').toString()).toBe(url);
    const credential = execCredential(token, NOW);
    expect(credential).toMatchObject({ kind: 'ExecCredential', apiVersion: 'client.authentication.k8s.io/v1beta1' });
    expect(Date.parse(credential.status.expirationTimestamp) - NOW.getTime()).toBe(14 * 60 * 1000);
  });

  it('explains missing input', () => {
    expect(parseArgs([], { AWS_REGION: 'eu-west-1' }).error).toMatch(/--cluster-name is required/);
    expect(parseArgs(['--cluster-name', 'x'], {}).error).toMatch(/--region is required/);
    expect(parseArgs(['--cluster-name', 'x', '--region', 'eu-west-1'], {}).error).toMatch(/AWS_ACCESS_KEY_ID/);
    expect(parseArgs(['--bogus'], {}).error).toMatch(/unexpected argument --bogus/);
  });

  it('runs as an exec plugin and prints an ExecCredential', () => {
    const out = execFileSync(process.execPath, [SCRIPT, '--cluster-name', 'prod', '--region', 'eu-west-1'], {
      env: {
        PATH: process.env['PATH'] ?? '',
        AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      },
      encoding: 'utf8',
    });
    const credential = JSON.parse(out);
    expect(credential.kind).toBe('ExecCredential');
    const url = new URL(Buffer.from(credential.status.token.slice('k8s-aws-v1.'.length), 'base64url').toString());
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^AKIDEXAMPLE\/\d{8}\/eu-west-1\/sts\/aws4_request$/);
    expect(url.searchParams.has('X-Amz-Security-Token')).toBe(false);
  });
});
