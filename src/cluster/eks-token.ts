import { eksToken, presignGetCallerIdentity } from './eks-token.mjs';
import type { EksTokenSource } from './kubeconfig.js';

/**
 * EKS bearer tokens signed in this process with the process's own AWS credentials, as the shipped `eks-token.mjs`
 * helper does when run as an exec plugin. The cluster reader function runs no kubeconfig commands, so this is how
 * its EKS kubeconfig authenticates there.
 */

class EksTokenError extends Error {
  override readonly name = 'EksTokenError';
}

/** EKS accepts a token for 15 minutes; a fresh one is signed a minute before that. */
const TOKEN_REUSE_MS = 14 * 60 * 1000;

export type EksTokenMinter = () => string;

export function eksTokenMinter(
  source: EksTokenSource,
  env: Readonly<Record<string, string | undefined>> = process.env,
  clock: () => Date = () => new Date(),
): EksTokenMinter {
  let cached: { token: string; until: number } | undefined;
  return () => {
    const now = clock();
    if (cached && now.getTime() < cached.until) return cached.token;
    const region = source.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
    if (!region)
      throw new EksTokenError('no AWS region for the EKS token: give --region in the kubeconfig or set AWS_REGION');
    const accessKeyId = env.AWS_ACCESS_KEY_ID;
    const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
    if (!accessKeyId || !secretAccessKey) {
      throw new EksTokenError(
        'no AWS credentials for the EKS token: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set',
      );
    }
    const url = presignGetCallerIdentity({
      clusterName: source.clusterName,
      region,
      accessKeyId,
      secretAccessKey,
      ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
      now,
    });
    cached = { token: eksToken(url), until: now.getTime() + TOKEN_REUSE_MS };
    return cached.token;
  };
}
