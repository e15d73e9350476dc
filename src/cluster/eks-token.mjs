#!/usr/bin/env node
/**
 * EKS bearer token for the calmops cluster-reader, as a kubeconfig exec credential plugin.
 *
 * EKS authenticates an IAM principal by a presigned STS GetCallerIdentity URL bound to the cluster name (what
 * `aws eks get-token` prints). The Lambda runtime has no AWS CLI, so this dependency-free script, shipped in the
 * cluster-reader bundle, does the same with the function's own credentials (AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, which Lambda sets) and prints an ExecCredential:
 *
 *   node eks-token.mjs --cluster-name NAME [--region REGION]
 *
 * The token is written to standard output only, for the Kubernetes client that started the process. The CDK stack
 * copies this file into the cluster-reader bundle as it is; eks-token.ts signs with the same functions in-process.
 */
import { createHash, createHmac } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** EKS accepts a token for 15 minutes; refresh a minute early. */
const TOKEN_LIFETIME_MS = 14 * 60 * 1000;

/** RFC 3986 encoding, as SigV4 requires (encodeURIComponent leaves !'()* alone). */
function encode(value) {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function hmac(key, text) {
  return createHmac('sha256', key).update(text, 'utf8').digest();
}

function sha256Hex(text) {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function amzDate(date) {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** The STS host of a region (China regions live under amazonaws.com.cn). */
export function stsHost(region) {
  return `sts.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
}

/**
 * The presigned GetCallerIdentity URL EKS verifies.
 * @param {{ clusterName: string, region: string, accessKeyId: string, secretAccessKey: string,
 *   sessionToken?: string, now?: Date }} options
 * @returns {string}
 */
export function presignGetCallerIdentity(options) {
  const { clusterName, region, accessKeyId, secretAccessKey, sessionToken } = options;
  const now = options.now ?? new Date();
  const host = stsHost(region);
  const stamp = amzDate(now);
  const day = stamp.slice(0, 8);
  const scope = `${day}/${region}/sts/aws4_request`;
  const signedHeaders = 'host;x-k8s-aws-id';
  const params = {
    Action: 'GetCallerIdentity',
    Version: '2011-06-15',
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Credential': `${accessKeyId}/${scope}`,
    'X-Amz-Date': stamp,
    'X-Amz-Expires': '60',
    'X-Amz-SignedHeaders': signedHeaders,
    ...(sessionToken ? { 'X-Amz-Security-Token': sessionToken } : {}),
  };
  const query = Object.keys(params)
    .sort()
    .map((k) => `${encode(k)}=${encode(params[k])}`)
    .join('&');
  const canonicalRequest = [
    'GET',
    '/',
    query,
    `host:${host}\nx-k8s-aws-id:${clusterName}\n`,
    signedHeaders,
    sha256Hex(''),
  ].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', stamp, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, day), region), 'sts'), 'aws4_request');
  const signature = createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  return `https://${host}/?${query}&X-Amz-Signature=${signature}`;
}

/** The bearer token: the URL, base64url without padding, behind the `k8s-aws-v1.` prefix. */
export function eksToken(url) {
  return `k8s-aws-v1.${Buffer.from(url, 'utf8').toString('base64url')}`;
}

/** The ExecCredential a kubeconfig exec plugin prints. */
export function execCredential(token, now = new Date()) {
  return {
    kind: 'ExecCredential',
    apiVersion: 'client.authentication.k8s.io/v1beta1',
    spec: {},
    status: { expirationTimestamp: new Date(now.getTime() + TOKEN_LIFETIME_MS).toISOString(), token },
  };
}

/** Parses `--cluster-name NAME --region R`; returns an error message for bad input. */
export function parseArgs(argv, env) {
  const args = { clusterName: undefined, region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    const value = argv[i + 1];
    if ((flag === '--cluster-name' || flag === '--region') && value !== undefined && !value.startsWith('--')) {
      if (flag === '--cluster-name') args.clusterName = value;
      else args.region = value;
      i += 1;
    } else {
      return { error: `unexpected argument ${flag}; usage: eks-token.mjs --cluster-name NAME [--region REGION]` };
    }
  }
  if (!args.clusterName) return { error: '--cluster-name is required' };
  if (!args.region) return { error: '--region is required (or set AWS_REGION)' };
  if (!env.AWS_ACCESS_KEY_ID || !env.AWS_SECRET_ACCESS_KEY) {
    return { error: 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set (they are in the Lambda environment)' };
  }
  return { args };
}

function main() {
  const parsed = parseArgs(process.argv.slice(2), process.env);
  if (parsed.error) {
    process.stderr.write(`eks-token: ${parsed.error}\n`);
    return 2;
  }
  const url = presignGetCallerIdentity({
    clusterName: parsed.args.clusterName,
    region: parsed.args.region,
    accessKeyId: process.env.AWS_ACCESS_KEY_ID,
    secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY,
    sessionToken: process.env.AWS_SESSION_TOKEN,
  });
  process.stdout.write(`${JSON.stringify(execCredential(eksToken(url)))}\n`);
  return 0;
}

const invokedDirectly =
  process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
if (invokedDirectly) process.exitCode = main();
