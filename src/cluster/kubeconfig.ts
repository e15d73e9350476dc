import { existsSync } from 'node:fs';
import { basename, delimiter, join } from 'node:path';
import { KubeConfig, type User } from '@kubernetes/client-node';

/** Where the reader's kubeconfig comes from: one file (or a KUBECONFIG-style list, merged), a string, or the pod. */
export interface KubeconfigSource {
  /** A kubeconfig file, or several merged as kubectl merges KUBECONFIG (the first file wins on conflicts). */
  file?: string | readonly string[];
  /** A kubeconfig document as YAML text (for example from Secrets Manager). */
  yaml?: string;
  /** The pod's service account (KUBERNETES_SERVICE_HOST/PORT and the mounted token). */
  inCluster?: boolean;
  /**
   * Let the kubeconfig run commands: exec credential plugins (`users[].user.exec`) and auth-provider commands
   * (`cmd-path`). Off by default; only a person at a command line can turn it on (`--allow-exec`).
   */
  allowExec?: boolean;
  /** Accept `insecure-skip-tls-verify: true` on an https server. Off by default (`--insecure-skip-tls-verify`). */
  allowInsecureTls?: boolean;
}

export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
}

export interface LoadedKubeconfig {
  kc: KubeConfig;
  context: string;
  /** The API server URL without trailing slash. */
  server: string;
  /** The server URL as safe to print: no userinfo. */
  displayServer: string;
  /**
   * Set when the user's exec plugin is the EKS token helper shipped with calmops: the reader signs the token itself
   * instead of starting a process, so it works where commands are refused.
   */
  eks?: EksTokenSource;
}

/** What the shipped helper (`node …/eks-token.mjs --cluster-name NAME [--region R]`) would sign a token for. */
export interface EksTokenSource {
  clusterName: string;
  /** Absent: the process's AWS_REGION / AWS_DEFAULT_REGION, as the helper does. */
  region?: string;
}

const EKS_HELPER = 'eks-token.mjs';

function describeSource(source: KubeconfigSource): string {
  if (source.file !== undefined) return `kubeconfig ${[source.file].flat().join(delimiter)}`;
  if (source.yaml !== undefined) return 'the kubeconfig text';
  return 'the in-cluster service account';
}

export function loadKubeconfig(source: KubeconfigSource, context?: string): LoadedKubeconfig {
  const given = [source.file !== undefined, source.yaml !== undefined, source.inCluster === true].filter(Boolean);
  if (given.length !== 1) {
    throw new KubeconfigError('give exactly one kubeconfig source: a file, YAML text, or in-cluster');
  }
  const kc = new KubeConfig();
  const where = describeSource(source);
  try {
    if (source.file !== undefined) loadFiles(kc, [source.file].flat());
    else if (source.yaml !== undefined) kc.loadFromString(source.yaml);
    else {
      if (!process.env.KUBERNETES_SERVICE_HOST || !process.env.KUBERNETES_SERVICE_PORT) {
        throw new KubeconfigError('not running in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set');
      }
      kc.loadFromCluster();
    }
  } catch (error) {
    if (error instanceof KubeconfigError) throw error;
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new KubeconfigError(`cannot load ${where}: ${reason}`, { cause: error });
  }
  if (context !== undefined) {
    if (!kc.getContextObject(context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new KubeconfigError(
        `context '${context}' is not in ${where}; contexts: ${known.length > 0 ? known.join(', ') : '(none)'}`,
      );
    }
    kc.setCurrentContext(context);
  }
  const current = kc.getCurrentContext();
  if (!current || !kc.getContextObject(current)) {
    throw new KubeconfigError(`${where} has no current context; pass a context`);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) {
    throw new KubeconfigError(`context '${current}' in ${where} names no cluster with a server URL`);
  }
  const url = serverUrl(cluster.name, cluster.server);
  if (url.protocol === 'http:' && !cluster.skipTLSVerify) {
    throw new KubeconfigError(
      `cluster '${cluster.name}' uses plain http; the client only allows that with insecure-skip-tls-verify: true`,
    );
  }
  // Plain http has no certificate to skip (the client insists on the flag for it anyway); https without
  // verification would hand the credentials to whoever answers.
  if (url.protocol === 'https:' && cluster.skipTLSVerify && source.allowInsecureTls !== true) {
    throw new KubeconfigError(
      `cluster '${cluster.name}' sets insecure-skip-tls-verify: true for ${displayOf(url)}: the server's certificate ` +
        'would not be checked and the credentials would go to whoever answers. Give the cluster its ' +
        'certificate-authority(-data) instead, or accept the risk on the command line with --insecure-skip-tls-verify',
    );
  }
  const eks = checkCommands(kc, current, source.allowExec === true);
  const base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  return { kc, context: current, server: base, displayServer: displayOf(url), ...(eks ? { eks } : {}) };
}

function displayOf(url: URL): string {
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * The server URL may carry a base path (a proxy in front of the API server, e.g. Rancher's `/k8s/clusters/ID`), but
 * every request is that base plus a path the read-only guard built, so the base itself must not steer requests:
 * no query, no fragment, no encoded or unusual characters, and no `api`/`apis` segment, which would make the
 * final path reach a different resource (a pod's `proxy` or `exec`, say) than the guard checked.
 */
function serverUrl(clusterName: string, server: string): URL {
  let url: URL;
  try {
    url = new URL(server);
  } catch (error) {
    throw new KubeconfigError(`cluster '${clusterName}' has an invalid server URL`, { cause: error });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new KubeconfigError(`cluster '${clusterName}' server must be http(s), got ${url.protocol}`);
  }
  const bad = (why: string): never => {
    throw new KubeconfigError(`cluster '${clusterName}' server URL ${why}; give the API server's address only`);
  };
  if (server.includes('?')) bad('has a query string');
  if (server.includes('#')) bad('has a fragment');
  // The parsed path is what would be sent: backslashes became slashes and dot segments are resolved by now.
  for (const segment of url.pathname.split('/').filter((s) => s !== '')) {
    if (!/^[A-Za-z0-9_~-][A-Za-z0-9._~-]*$/.test(segment)) {
      bad(`has a base path segment '${segment.slice(0, 40)}' that is not a plain name`);
    }
    if (segment === 'api' || segment === 'apis') {
      bad(`has a base path with an API path in it ('/${segment}/…'); the base path may only be a prefix`);
    }
  }
  url.username = '';
  url.password = '';
  return url;
}

/**
 * Kubeconfig users can name commands the client runs to get a credential. They run only when allowed, except the
 * EKS token helper calmops ships, which is recognised and replaced by signing in-process.
 */
function checkCommands(kc: KubeConfig, context: string, allowExec: boolean): EksTokenSource | undefined {
  const user = kc.getCurrentUser();
  if (!user) return undefined;
  const exec = user.exec as { command?: unknown; args?: unknown } | undefined | null;
  if (exec) {
    const eks = eksHelper(exec);
    if (eks) {
      // The plugin entry is dropped so the client never starts it; the reader adds the token itself.
      kc.users = kc.users.map((u): User => (u === user ? { ...u, exec: undefined } : u));
      return eks;
    }
    if (!allowExec) {
      const command = typeof exec.command === 'string' ? ` (${basename(exec.command).slice(0, 60)})` : '';
      throw new KubeconfigError(
        `user '${user.name}' of context '${context}' gets its credential from an exec plugin${command}, which runs a ` +
          'command on this machine; calmops runs no kubeconfig commands unless allowed (--allow-exec on the command ' +
          'line; never in the cluster reader function)',
      );
    }
  }
  const provider = user.authProvider as { name?: unknown; config?: Record<string, unknown> } | undefined | null;
  if (provider?.config && provider.config['cmd-path'] !== undefined && !allowExec) {
    const name = typeof provider.name === 'string' ? provider.name.slice(0, 40) : 'auth-provider';
    throw new KubeconfigError(
      `user '${user.name}' of context '${context}' has a ${name} auth-provider with cmd-path, which runs a command on ` +
        'this machine; calmops runs no kubeconfig commands unless allowed (--allow-exec on the command line; never ' +
        'in the cluster reader function)',
    );
  }
  return undefined;
}

/** `node …/eks-token.mjs --cluster-name NAME [--region R]`, exactly as make-eks-kubeconfig.sh writes it. */
function eksHelper(exec: { command?: unknown; args?: unknown }): EksTokenSource | undefined {
  if (typeof exec.command !== 'string' || basename(exec.command) !== 'node') return undefined;
  const args = Array.isArray(exec.args) ? exec.args : [];
  const [script, ...rest] = args;
  if (typeof script !== 'string' || basename(script) !== EKS_HELPER) return undefined;
  let clusterName: string | undefined;
  let region: string | undefined;
  for (let i = 0; i < rest.length; i += 2) {
    const [flag, value] = [rest[i], rest[i + 1]];
    if (typeof value !== 'string' || value === '' || value.startsWith('--')) return undefined;
    if (flag === '--cluster-name') clusterName = value;
    else if (flag === '--region') region = value;
    else return undefined;
  }
  if (clusterName === undefined) return undefined;
  return { clusterName, ...(region !== undefined ? { region } : {}) };
}

/** kubectl's merge rule: the first file that sets a name (or the current context) wins. */
function loadFiles(kc: KubeConfig, files: readonly string[]): void {
  const [first, ...rest] = files;
  if (first === undefined) throw new KubeconfigError('the kubeconfig file list is empty');
  kc.loadFromFile(first);
  for (const file of rest) {
    const next = new KubeConfig();
    next.loadFromFile(file);
    const has = <T extends { name: string }>(list: readonly T[], name: string) => list.some((x) => x.name === name);
    for (const c of next.getClusters()) if (!has(kc.getClusters(), c.name)) kc.addCluster(c);
    for (const u of next.getUsers()) if (!has(kc.getUsers(), u.name)) kc.addUser(u);
    for (const c of next.getContexts()) if (!has(kc.getContexts(), c.name)) kc.addContext(c);
    if (!kc.getCurrentContext() && next.getCurrentContext()) kc.setCurrentContext(next.getCurrentContext());
  }
}

/**
 * kubectl's lookup order for a command line: an explicit file, then $KUBECONFIG (a path list), then
 * ~/.kube/config, then the pod's service account.
 */
export function resolveKubeconfigSource(
  explicitFile: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): KubeconfigSource {
  if (explicitFile !== undefined) {
    if (!existsSync(explicitFile)) throw new KubeconfigError(`kubeconfig file ${explicitFile} does not exist`);
    return { file: explicitFile };
  }
  const fromEnv = (env.KUBECONFIG ?? '').split(delimiter).filter((p) => p !== '');
  if (fromEnv.length > 0) {
    const present = fromEnv.filter((p) => existsSync(p));
    if (present.length === 0) throw new KubeconfigError(`no file in KUBECONFIG exists (${fromEnv.join(delimiter)})`);
    return { file: present.length === 1 ? (present[0] as string) : present };
  }
  const home = env.HOME ?? env.USERPROFILE;
  if (home) {
    const defaultFile = join(home, '.kube', 'config');
    if (existsSync(defaultFile)) return { file: defaultFile };
  }
  if (env.KUBERNETES_SERVICE_HOST) return { inCluster: true };
  throw new KubeconfigError('no kubeconfig: pass --kubeconfig FILE or set KUBECONFIG');
}
