export interface PresignOptions {
  clusterName: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  now?: Date;
}
export interface ExecCredential {
  kind: 'ExecCredential';
  apiVersion: 'client.authentication.k8s.io/v1beta1';
  spec: Record<string, never>;
  status: { expirationTimestamp: string; token: string };
}
export declare function stsHost(region: string): string;
export declare function presignGetCallerIdentity(options: PresignOptions): string;
export declare function eksToken(url: string): string;
export declare function execCredential(token: string, now?: Date): ExecCredential;
export declare function parseArgs(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): { args: { clusterName: string; region: string }; error?: undefined } | { error: string; args?: undefined };
